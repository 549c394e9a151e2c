"""scripts/mutation_score.py rule 4: the message-text classifier is sound. Each case is a mutant
mutmut 3 makes whose change only LOOKS like message text (an argument or a local's value replaced by
None or another string) but can change behaviour: a TypeError, KeyError or AttributeError while the
message is built, a skipped lookup, a secret no longer scrubbed, an error code. None may be classified.
Found by a review of the message-locals rule; the sound cases beside them must stay unclassified too."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mutation_score import script

HEAD = "from x import WebError, WebErrorCode, scrub_secrets\n"

# name -> the module after HEAD: x_f__mutmut_orig and x_f__mutmut_1 (the mutant; its comment says what it breaks)
UNSOUND = {
    'carrier_param_in_plus_inside_message': '''
def _local(index, what):
    return WebError(WebErrorCode.INVALID_ARGUMENTS, f"query {index + 1} carries {what}")

def x_f__mutmut_orig(i):
    raise _local(i, "a local path")

def x_f__mutmut_1(i):
    raise _local(None, "a local path")   # None + 1: TypeError, not WebError(INVALID_ARGUMENTS)
''',
    'carrier_param_given_to_scrub_inside_message': '''
def _failed(text, hidden):
    return WebError(WebErrorCode.PROVIDER_ERROR, scrub_secrets(text, hidden))

def x_f__mutmut_orig(body, key):
    raise _failed(f"upstream said {body}", (key,))

def x_f__mutmut_1(body, key):
    raise _failed(f"upstream said {body}", None)   # nothing scrubbed: the key can leak
''',
    'carrier_param_in_ifexp_test_of_message_local': '''
def _invalid(key, env, reason):
    where = f" (from {env})" if env.startswith("DSWEB_") else ""
    return WebError(WebErrorCode.CONFIG_INVALID, f"invalid setting {key}{where}: {reason}")

def x_f__mutmut_orig(key):
    raise _invalid(key, "DSWEB_TIMEOUT", "must be set")

def x_f__mutmut_1(key):
    raise _invalid(key, None, "must be set")   # None.startswith: AttributeError
''',
    'carrier_param_as_table_index': '''
def _wrong_type(key, kind):
    noun = {"str": "a string", "int": "an integer"}[kind]
    return WebError(WebErrorCode.CONFIG_INVALID, f"{key} must be {noun}")

def x_f__mutmut_orig(key):
    raise _wrong_type(key, "str")

def x_f__mutmut_1(key):
    raise _wrong_type(key, "XXstrXX")   # KeyError instead of WebError(CONFIG_INVALID)
''',
    'carrier_param_under_format_spec': '''
def _slow(seconds):
    return WebError(WebErrorCode.FETCH_TIMEOUT, f"no answer after {seconds:.1f} s")

def x_f__mutmut_orig(t):
    raise _slow(t)

def x_f__mutmut_1(t):
    raise _slow(None)   # format(None, ".1f"): TypeError
''',
    'local_in_ifexp_branch_that_is_a_plus_operand': '''
def x_f__mutmut_orig(c):
    noun = "a string"
    raise WebError(WebErrorCode.CONFIG_INVALID, "must be " + (noun if c else "a number"))

def x_f__mutmut_1(c):
    noun = None   # "must be " + None: TypeError
    raise WebError(WebErrorCode.CONFIG_INVALID, "must be " + (noun if c else "a number"))
''',
    'local_as_table_value_that_is_a_plus_operand': '''
def x_f__mutmut_orig(kind):
    noun = "a string"
    raise WebError(WebErrorCode.CONFIG_INVALID, "must be " + {"str": noun, "int": "an integer"}[kind])

def x_f__mutmut_1(kind):
    noun = None
    raise WebError(WebErrorCode.CONFIG_INVALID, "must be " + {"str": noun, "int": "an integer"}[kind])
''',
    'local_unpacked_with_double_star_in_table': '''
def x_f__mutmut_orig(kind):
    extra = {"int": "an integer"}
    noun = {**extra, "str": "a string"}[kind]
    raise WebError(WebErrorCode.CONFIG_INVALID, f"must be {noun}")

def x_f__mutmut_1(kind):
    extra = None   # {**None}: TypeError
    noun = {**extra, "str": "a string"}[kind]
    raise WebError(WebErrorCode.CONFIG_INVALID, f"must be {noun}")
''',
    'local_value_evaluated_on_the_success_path': '''
def x_f__mutmut_orig(reply):
    detail = reply["error"]["message"]
    if reply["status"] != 200:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"failed: {detail}")
    return reply["body"]

def x_f__mutmut_1(reply):
    detail = None   # a 200 reply without "error": KeyError before, a result now
    if reply["status"] != 200:
        raise WebError(WebErrorCode.PROVIDER_ERROR, f"failed: {detail}")
    return reply["body"]
''',
    'local_never_read_is_a_message_local': '''
def x_f__mutmut_orig(pending, key):
    _ = pending.pop(key)
    return len(pending)

def x_f__mutmut_1(pending, key):
    _ = None   # the pop (and its KeyError) is gone; no message anywhere
    return len(pending)
''',
    'assignment_in_a_class_body_inside_the_function': '''
def x_f__mutmut_orig():
    class Failure:
        code = WebErrorCode.PROVIDER_ERROR
    raise WebError(Failure.code, "failed")

def x_f__mutmut_1():
    class Failure:
        code = None   # the error code changes
    raise WebError(Failure.code, "failed")
''',
}

# Shapes that were never message text and must stay so: (function body, original text, mutated text)
C = "WebErrorCode.PROVIDER_ERROR"

SOUND = {
    "del": ('msg = "a"\n    del msg\n    msg = "b"\n    raise WebError(C, msg)', '"a"', "None"),
    "augassign": ('msg = "a"\n    msg += "b"\n    raise WebError(C, msg)', '"a"', "None"),
    "walrus": ('msg = "a"\n    if (msg := "b"):\n        pass\n    raise WebError(C, msg)', '"a"', "None"),
    "for": ('msg = "a"\n    for msg in q:\n        pass\n    raise WebError(C, msg)', '"a"', "None"),
    "with": ('msg = "a"\n    with q as msg:\n        pass\n    raise WebError(C, msg)', '"a"', "None"),
    "global": ('global msg\n    msg = "a"\n    raise WebError(C, msg)', '"a"', "None"),
    "lambda": ('msg = "a"\n    g = lambda: msg\n    raise WebError(C, msg)', '"a"', "None"),
    "comprehension": ('msg = "a"\n    g = [msg for _ in q]\n    raise WebError(C, msg)', '"a"', "None"),
    "plus_in_fstring": ('lead = "a"\n    raise WebError(C, f"{lead + q}")', '"a"', "None"),
    "format_method": ('lead = "a"\n    raise WebError(C, "x {}".format(lead))', '"a"', "None"),
    "percent": ('lead = "a"\n    raise WebError(C, "x %s" % lead)', '"a"', "None"),
    "condition": ('lead = "a"\n    if lead == q:\n        pass\n    raise WebError(C, lead)', '"a"', "None"),
    "code_local": ('code = C\n    raise WebError(code, "m")', 'code = C', "code = None"),
    "format_spec": ('w = "10"\n    raise WebError(C, f"{q:{w}}")', '"10"', "None"),
    "match_subject": ('msg = "a"\n    match msg:\n        case _:\n            pass\n    raise WebError(C, msg)',
                      '"a"', "None"),
    "tuple_count": ('a, b = ("x", "y")\n    raise WebError(C, f"{a}{b}")', '("x", "y")', "None"),
    "table_key": ('noun = {"s": "a string"}[q]\n    raise WebError(C, f"{noun}")', '"s":', '"XXsXX":'),
    "ifexp_test": ('w = "a" if q == "k" else "b"\n    raise WebError(C, w)', '"k"', '"XXkXX"'),
    "local_arg_of_scrub": ('t = "a"\n    raise WebError(C, scrub(t, q))', '"a"', "None"),
}


def _classify(tmp_path: Path, source: str) -> dict[str, bool]:
    path = tmp_path / "mutants" / "pkg" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    return {n: m.message_only for n, m in script.read_mutants(tmp_path).items()}


@pytest.mark.parametrize("case", sorted(UNSOUND))
def test_a_change_that_can_break_building_the_message_is_never_message_text(tmp_path: Path, case: str) -> None:
    assert _classify(tmp_path, HEAD + UNSOUND[case])["pkg.mod.x_f__mutmut_1"] is False


@pytest.mark.parametrize("case", sorted(SOUND))
def test_a_local_read_outside_shown_text_is_never_a_message_local(tmp_path: Path, case: str) -> None:
    body, old, new = SOUND[case]
    body = body.replace("(C,", f"({C},").replace("code = C", f"code = {C}")
    old = old.replace("C", C) if old.startswith("code") else old
    assert old in body, case
    orig = f"def x_f__mutmut_orig(q):\n    {body}\n"
    mutant = f"def x_f__mutmut_1(q):\n    {body.replace(old, new, 1)}\n"
    assert _classify(tmp_path, HEAD + orig + mutant)["pkg.mod.x_f__mutmut_1"] is False, case
