"""A differential corpus: Agents SDK apps written the way the SDK's own examples are
(agents built inside ``main()``, run with ``Runner``), each read by stepswitch through a
function TARGET and run on both sides over the real ``openai`` client (test_corpus.py)."""
