"""TARGETs: what ``file.py:NAME``, ``package.module:NAME``, a file or a folder names.

Read by the command line, the studio page and ``stepswitch test`` cases alike, so none
of them imports another to load a workflow. Not API.

- :mod:`~stepswitch.targets.load`: a TARGET to its workflows (``load_targets``), to
  exactly one (``load_one``), or to one compiled machine (``compile_one``);
- :mod:`~stepswitch.targets.context`: the run context (``--context`` or the workflow's
  ``context_type``);
- :mod:`~stepswitch.targets.sides`: one side of a diff, a TARGET in the work tree or
  at a git ref;
- :mod:`~stepswitch.targets.shadow`: files beside a workflow that shadow a module
  stepswitch needs.

Every failure is a :class:`~stepswitch.errors.TargetError`.
"""
