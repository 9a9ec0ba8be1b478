"""Static analysis: every check of a workflow graph, as coded, located diagnostics.

``analyze(graph)`` returns a :class:`Report`; ``Workflow.check()`` is the facade. The
code registry is :mod:`stepswitch.analysis.codes`; each code's documentation page ships
in this package (``docs/<CODE>.md``) and ``stepswitch explain CODE`` prints it.
"""

from stepswitch.analysis.analyze import analyze
from stepswitch.analysis.codes import CODES, Code, code_doc
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation, Severity
from stepswitch.analysis.report import Report

__all__ = [
    "CODES",
    "Code",
    "Diagnostic",
    "DiagnosticLocation",
    "Report",
    "Severity",
    "analyze",
    "code_doc",
]
