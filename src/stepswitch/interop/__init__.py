"""Reading apps written for other frameworks into stepswitch workflows.

``stepswitch.interop.sdk`` reads OpenAI Agents SDK agents (``ss.from_sdk``). Nothing here
is imported by ``import stepswitch`` or by the runtime: each reader loads on first use,
with the framework it reads.
"""
