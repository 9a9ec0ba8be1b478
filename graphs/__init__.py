"""The project's reference workflows, declared in the DSL. CI checks every one."""
