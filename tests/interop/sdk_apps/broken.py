"""SDK agents stepswitch refuses to read, each for a reason a user can fix."""

from agents import Agent, FunctionTool

ping = Agent(name="Ping", instructions="Ping.")
pong = Agent(name="Pong", instructions="Pong.")
ping.tools.append(pong.as_tool(tool_name="ask_pong", tool_description="Ask pong."))
pong.tools.append(ping.as_tool(tool_name="ask_ping", tool_description="Ask ping."))


class _Exploding:
    """An invoker that fails when anything reads it."""

    async def __call__(self, ctx: object, raw: str) -> str:
        return raw

    def __getattr__(self, name: str) -> object:
        raise RuntimeError("inspection failed")


async def _echo(ctx: object, raw: str) -> str:
    return raw


exploding = FunctionTool(name="exploding", description="Explodes.",
                         params_json_schema={"type": "object", "properties": {}},
                         on_invoke_tool=_echo)
exploding.on_invoke_tool = _Exploding()  # swapped in after the SDK's own checks
fragile = Agent(name="Fragile", instructions="Fragile.", tools=[exploding])


async def _plain(ctx: object, raw: str) -> str:
    return raw


hand_made = FunctionTool(name="hand_made", description="Built by hand.",
                         params_json_schema={"type": "object", "properties": {}},
                         on_invoke_tool=_plain)
handmade = Agent(name="Handmade", instructions="Handmade.", tools=[hand_made])
