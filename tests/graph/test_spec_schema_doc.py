"""The published JSON schema of the spec (docs/spec.schema.json) is current."""

from __future__ import annotations

import json

import stepswitch as ss
from stepswitch.graph.spec import spec_json_schema
from tests._paths import ROOT

DOC = ROOT / "docs" / "spec.schema.json"


def test_published_schema_is_current() -> None:
    published = json.loads(DOC.read_text(encoding="utf-8"))
    assert published == spec_json_schema(), "run `make docs` to regenerate docs/spec.schema.json"


def test_support_spec_validates_against_the_published_schema() -> None:
    import jsonschema

    from graphs import support

    published = json.loads(DOC.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(support.support.to_json()), published)
    assert published["title"] == ss.WorkflowSpec.__name__
