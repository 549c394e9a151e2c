"""Single-search checks: what goes on the wire (seed 001) and how one query is answered (seed 000).

Wire checks compare exactly: the header set, the body key set, the server-tool object, each value
the settings passed through ``configure`` decide.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ...emulator import RequestRecord, Status
from ..adapter_protocol import CAP_PACING, CAP_RETRY
from ..cases import CARRY, Case
from ..targets import CallOutcome
from ._base import (
    REFUSED_SETTING_CODES,
    CheckContext,
    check,
    expect_success,
    require,
    unless_refused,
)
from ._oracle import expected_merge, observed, query_match, query_of, source_urls

WS, MSG, API = "web_search", "messages-search", "search-api"
# Headers HTTP/1.1 itself needs to carry a request; everything else a client adds is its choice.
FRAMING_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


def media_type(record: RequestRecord) -> str | None:
    value = record.header("content-type")
    return None if value is None else value.split(";", 1)[0].strip().lower()


def added_headers(record: RequestRecord) -> list[str]:
    """The header names a request carries beyond HTTP framing, lower-case, repeats kept."""
    return sorted(name for name, _ in record.headers if name not in FRAMING_HEADERS)


def only_record(ctx: CheckContext, route: str, what: str) -> RequestRecord:
    return each_record(ctx, route, what, 1)[0]


def each_record(ctx: CheckContext, route: str, what: str, count: int) -> list[RequestRecord]:
    records = ctx.records(route)
    require(len(records) == count, f"{what}: expected {count} {route} request(s), saw {len(records)}")
    return records


def require_tools_api_headers(record: RequestRecord, what: str) -> None:
    """Seed 001: Search and Fetch requests send only Authorization (Bearer) and a JSON Content-Type."""
    added = added_headers(record)
    require(added == ["authorization", "content-type"],
            f"{what}: headers {added}, expected exactly authorization and content-type (plus HTTP framing)",
            headers=added)
    require(record.credential == "api_key" and record.credential_source == "authorization",
            f"{what}: the key must travel as Authorization: Bearer (saw {record.credential})")
    require(media_type(record) == "application/json", f"{what}: Content-Type {record.header('content-type')!r}")



# Seed 000 keeps the bounds deployment-owned ('a deployment-owned bound keeps the model schema focused on search
# input') and seed 001 rejects 'Let the model supply ori_question as a tool argument': a model argument beside
# queries that names a provider control is refused (an unknown argument, before any request) or ignored, never
# forwarded. Rows carrying one set "extra" (the argument keys added to the call's queries).
async def search_with_extra(
    ctx: CheckContext, case: Case, queries: list[str], prompt: str | None
) -> CallOutcome | None:
    """The call's outcome with ``case``'s extra arguments added (a plain search without them); None when the
    target refused them as invalid arguments before any request."""
    extra: dict[str, Any] = case.params.get("extra", {})
    if not extra:
        return await ctx.search(queries, prompt)
    return await unless_refused(ctx, case, await ctx.search_arguments({"queries": queries, **extra}, prompt))

THINKING = (
    Case("one query", "thinking left at the DeepSeek default (enabled) or tool_choice sent", {"queries": ["markdown"]}),
    Case("a batch", "the fix applied to the first request only", {"queries": ["markdown", "coffee"]}),
    # From an outside hunt: the user's prompt taken as a reason to let the model think about the question.
    Case("with the latest prompt", "thinking disabled only for calls without the user's prompt (a prompt, sent "
         "with sendOriginalQuestion on, turns thinking on)", {"queries": ["markdown"], "prompt": "what is markdown?"}),
    # From an outside hunt (M): the rows above run the default deepseek-... model only. Seed 001 names an
    # Anthropic-compatible gateway that serves Messages search, and a Claude name is one such deployment's model.
    Case("a gateway's model name", "thinking sent only when the model name says DeepSeek (taken for a DeepSeek "
         "extension), so a claude-... model's auxiliary request reasons at full cost",
         {"queries": ["markdown"], "model": "claude-sonnet-4-5"}),
)


@check(
    "search.messages.thinking_disabled",
    "Messages search sends thinking {type: disabled} and no tool_choice",
    seed="001",
    requires=(WS, MSG),
    provider="messages",
    rule="Seed 001: 'The retained Messages path explicitly sends thinking: { type: 'disabled' } ... "
    "tool_choice remains omitted.' Every Messages request carries exactly that thinking object and no tool_choice, "
    "a call that carries the user's latest prompt too, whatever the configured model is called (seed 001 names "
    "an Anthropic-compatible gateway serving Messages search; a target refusing a model name is not judged on it).",
    cases=THINKING,
)
async def thinking_disabled(ctx: CheckContext) -> None:
    configured = ctx.config.model
    for case in THINKING:
        model = case.params.get("model", configured)
        if model != ctx.config.model and not await ctx.configure_if_accepted(model=model):
            continue  # a target refusing the model name sends nothing with it
        ctx.emu.log.clear()
        outcome = await ctx.search(case["queries"], case.params.get("prompt"))
        if model != configured and outcome.error_code in REFUSED_SETTING_CODES:
            # refused at the call instead of at configure (no seed makes a target accept any model name): what it
            # sent before refusing is still judged below, and sending nothing is fine
            await ctx.settle()
        else:
            expect_success(outcome, f"{case.name}: Messages search {case['queries']}")
        bodies = [r.json for r in ctx.records("messages")]
        if not outcome.ok:
            for body in bodies:
                require(isinstance(body, dict) and body.get("thinking") == {"type": "disabled"},
                        f"{case.name}: a Messages request sent before the refusal has no thinking disabled",
                        catches=case.catches)
            continue
        require(len(bodies) == len(case["queries"]), f"{case.name}: {len(bodies)} Messages requests")
        for body in bodies:
            require(isinstance(body, dict), "Messages request body is not a JSON object")
            require(
                body.get("thinking") == {"type": "disabled"},
                f"{case.name}: Messages body has thinking={body.get('thinking')!r}, expected {{'type': 'disabled'}}",
                catches=case.catches,
            )
            require("tool_choice" not in body, f"{case.name}: Messages body carries tool_choice; it must be omitted")


MESSAGES_KEYS = ["max_tokens", "messages", "model", "thinking", "tools"]
LONG_MESSAGES_QUERY = ("markdown tables and fenced code blocks: how do GitHub, GitLab and CommonMark differ when a "
                       "table cell holds a pipe character now?")  # 129 characters
MESSAGES_WIRE = (
    Case("defaults", "a server tool of another version, name or shape; one of the five body keys left out",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5}),
    Case("max_uses 1, another model", "max_uses or the model hard-coded instead of taken from the settings",
         {"model": "deepseek-v4-pro", "max_tokens": 2048, "max_uses": 1}),
    Case("max_uses 7", "max_uses clamped to the default", {"model": "deepseek-v4-flash", "max_tokens": 1024,
                                                          "max_uses": 7}),
    # The emulator serves the messages route at /anthropic/messages too, so a client that inserts /v1
    # still reaches a working route: the request log's path, not the answer, tells it apart.
    Case("a base without /v1", "/v1 inserted into a Messages base whose path does not end in it (a route "
         "prefix inferred, as a client that appends the SDK's /v1/messages to the base does)",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "base": "/anthropic"}),
    Case("a batch, max_uses 5", "maxUses read as the whole call's budget and split between the searches of a "
         "batch (each request sent max_uses 2)",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "queries": ["markdown", "coffee"]}),
    Case("a prompt, sendOriginalQuestion off", "the user's latest prompt added to the Messages request, with the "
         "setting that keeps it from the search service ignored",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "off": True,
          "prompt": "which zebraquartz tincture did my aunt mention?", "mark": "zebraquartz"}),
    # From an outside hunt (H): searchMaxResults, the source cap, taken for a bound on native searches too.
    Case("searchMaxResults below max_uses", "max_uses lowered to the request's result bound (searchMaxResults 3 "
         "read as a limit on native searches, so max_uses 3 is sent instead of 5)",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "cap": 3}),
    # From an outside hunt (H): the Direct Search service's 1-128 character constraint carried over to Messages.
    # 129 characters, one past the service's bound: no seed bounds a Messages (or web_search) query, so a target
    # with a bound of its own above 128 passes whatever it is (a review: a 202-character query failed one of 200).
    Case("a query over 128 characters", "the Direct Search service's 1-128 character query constraint applied to "
         "Messages search (the query refused before sending, or cut to 128 characters)",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "answered": True,
          "queries": [LONG_MESSAGES_QUERY]}),
    # An audit of the seeds' decisions: maxUses is the provider's setting, so a max_uses the model adds beside
    # queries is refused (before any request) or ignored.
    Case("max_uses among the arguments", "a model-supplied max_uses argument forwarded into the server tool (20 "
         "sent) in place of the configured maxUses",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "extra": {"max_uses": 20}}, CARRY),
    # From an outside hunt (L): the row above tries a larger value only, so a model's max_uses honoured when it
    # lowers the budget was certified. The budget is the deployment's either way.
    Case("a smaller max_uses among the arguments", "a model-supplied max_uses honoured when below the configured "
         "maxUses (1 sent in place of 5: the model narrowing the deployment's budget)",
         {"model": "deepseek-v4-flash", "max_tokens": 4096, "max_uses": 5, "extra": {"max_uses": 1}}, CARRY),
)


@check(
    "search.messages.wire",
    "Messages search sends the web_search_20250305 server tool with the configured max_uses, model and max_tokens",
    seed="001",
    requires=(WS, MSG),
    provider="messages",
    rule="Seed 001 keeps Messages search ('web-search-deepseek keeps Messages search') and seed 000 bounds it "
    "with the provider-owned maxUses ('a model-backed provider with its own maxUses'). The body carries "
    "{model, max_tokens, messages, tools, thinking} (other fields are open; tool_choice is "
    "search.messages.thinking_disabled's): model and max_tokens as configured, one user message "
    "carrying the query, and tools exactly [{type: web_search_20250305, name: web_search, max_uses}]. The "
    "request carries the key (Authorization: Bearer or x-api-key) and a JSON Content-Type; other headers "
    "are the implementation's choice. 'Messages keeps https://api.deepseek.com/anthropic/v1 and appends "
    "/messages'; prefixes 'are never inferred from the hostname, so another deployment enters its complete "
    "base': the request goes to exactly the configured base plus /messages, also under a base without /v1. "
    "maxUses bounds each search, not the call: 'a model-backed provider with its own maxUses can permit up to "
    "searchMaxQueries × maxUses native searches' (seed 000), so every request of a batch carries max_uses as "
    "configured. Seed 001 names Search API mode as the one that 'also sends up to 128 characters of the user's "
    "prompt to the search service ... unless sendOriginalQuestion is off': with it off, no Messages request "
    "carries the prompt (with it on, whether a Messages request carries it is left open). 'searchMaxResults "
    "bounds only the combined sources returned to the caller' (seed 000): max_uses is sent as configured under a "
    "searchMaxResults below it. 'The service "
    "enforces the 1–128 Unicode-character query constraint' is said of Direct Search (seed 001), and 'Messages "
    "remains the default ... so existing users keep working search': a Messages query over 128 characters is "
    "searched, carried whole in the prompt, and its sources returned. maxUses is the deployment's (seed 000: "
    "'a deployment-owned bound keeps the model schema focused on search input'): a max_uses argument the model "
    "adds beside queries is refused as WEB_INVALID_ARGUMENTS before any request, or ignored; never sent, a "
    "smaller one than the configured maxUses neither.",
    cases=MESSAGES_WIRE,
)
async def messages_wire(ctx: CheckContext) -> None:
    default_cap = ctx.config.search_max_results
    for case in MESSAGES_WIRE:
        prefix: str | None = case.params.get("base")
        base = ctx.emu.messages_base if prefix is None else ctx.emu.base_url + prefix
        cap: int = case.params.get("cap", default_cap)
        await ctx.configure(model=case["model"], max_tokens=case["max_tokens"], max_uses=case["max_uses"],
                            messages_base=base, send_original_question=not case.params.get("off"),
                            search_max_results=cap)
        ctx.emu.log.clear()
        queries: list[str] = case.params.get("queries", ["deepseek search api"])
        prompt: str | None = case.params.get("prompt")
        outcome = await search_with_extra(ctx, case, queries, prompt)
        if outcome is None:  # the model's extra argument refused before any request
            continue
        value = expect_success(outcome, f"{case.name}: Messages search")
        records = each_record(ctx, "messages", case.name, len(queries))
        for record in records:
            _require_messages_request(case, base, record)
            if prompt is not None:  # only with sendOriginalQuestion off (the row); its mark is in no query
                require(case["mark"] not in json.dumps(record.json, ensure_ascii=False),
                        f"{case.name}: the request carries the user's prompt although sendOriginalQuestion is "
                        "off", catches=case.catches)
        # Each request's query as the checks read a prompt (the wording around it open); a query word that the
        # wording happens to hold is no second query.
        carried = sorted(q for r in records if _user_text(r.json) for q in [query_of(r, queries)] if q is not None)
        require(carried == sorted(queries), f"{case.name}: each request must be one user message carrying one "
                "query of the call", carried=carried, expected=sorted(queries))
        if case.params.get("answered"):  # the search's own sources come back, not an empty or other result
            want = [s.url for s in expected_merge(records, queries, cap).sources]
            got = source_urls(value)
            require(bool(want) and got == want, f"{case.name}: sources differ from the Messages answer's",
                    got=got, expected=want)


def _user_text(body: Any) -> str:
    """The one user message's content, as text ("" when the body has no such message)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not (isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict)
            and messages[0].get("role") == "user"):
        return ""
    return json.dumps(messages[0].get("content"), ensure_ascii=False)


def _require_messages_request(case: Case, base: str, record: RequestRecord) -> None:
    want = urlsplit(base).path + "/messages"
    require(record.path == want, f"{case.name}: the request went to {record.path}, expected {want}: the "
            "configured Messages base is complete and only /messages is appended", path=record.path)
    body: Any = record.json
    require(isinstance(body, dict), f"{case.name}: the body is not a JSON object")
    # Other documented Messages fields are open (seed 001 fixes only thinking and the omitted tool_choice)
    missing = [k for k in MESSAGES_KEYS if k not in body]
    require(not missing, f"{case.name}: body keys {sorted(body)} lack {missing}")
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": case["max_uses"]}
    require(body["tools"] == [tool], f"{case.name}: tools {body['tools']!r}, expected [{tool!r}]",
            catches=case.catches)
    require(body["model"] == case["model"], f"{case.name}: model {body['model']!r}, expected {case['model']!r}")
    require(body["max_tokens"] == case["max_tokens"],
            f"{case.name}: max_tokens {body['max_tokens']!r}, expected {case['max_tokens']}")
    require(record.credential == "api_key", f"{case.name}: the key was not presented (saw {record.credential})")
    require(media_type(record) == "application/json", f"{case.name}: Content-Type {record.header('content-type')!r}")


# Whitespace classes both JavaScript's \s and Python's str.split() count as whitespace.
UNICODE_SPACES = "\u00a0\u1680\u2003\u2028\u2029\u202f\u205f\u3000"
ORI_CASES = (
    Case("ASCII whitespace runs", "the raw prompt sent (no collapse)",
         {"prompt": "  What\tdoes the\n\n Search API   send?\r\n"}),
    Case("Unicode whitespace classes", "only ASCII whitespace collapsed",
         {"prompt": "a" + UNICODE_SPACES + "b\u3000\u3000c\u00a0d\u2028\u2029e"}),
    Case("letter at the limit", "no cut, or a cut at 127 or 129", {"prompt": "abcdefghi " * 20}),
    Case("space at the limit", "the prompt cut before collapsing",
         {"prompt": "x" * 60 + " \t  " * 10 + "y" * 66 + " z" * 20}),
    Case("astral character at the limit", "the cut counted in UTF-16 units or bytes",
         {"prompt": "x" * 100 + "😀" * 40}),
    Case("CJK text", "the cut counted in UTF-8 bytes", {"prompt": "界" * 50 + " " + "深度求索" * 30}),
    Case("combining mark at the limit", "the cut counted in graphemes, or the prompt normalised",
         {"prompt": "a" * 127 + "e\u0301" + " more words"}),
    Case("a batch of two queries", "the prompt sent with a one-query call only, not with each search of a batch",
         {"prompt": "which   of these\tdiffer?", "queries": ["markdown", "coffee"]}),
    Case("the prompt is the query", "ori_question omitted when it would repeat the query (a question searched as "
         "typed), though the seed omits it only without a prompt or with the setting off",
         {"prompt": "What is Markdown?", "queries": ["What is Markdown?"]}),
    # An audit of the seeds' decisions: seed 001 rejects 'Let the model supply ori_question as a tool argument'.
    Case("ori_question among the arguments", "a model-supplied ori_question argument forwarded into the Search API "
         "request in place of the user's latest prompt",
         {"prompt": "what is markdown used for", "extra": {"ori_question": "a paraphrase the model wrote"}}, CARRY),
)
OMITTED = (
    Case("blank prompt", "a blank ori_question sent (the API rejects it)", {"prompt": "  \n\t" + UNICODE_SPACES}),
    Case("no prompt", "an empty or null ori_question sent", {"prompt": None}),
    Case("sendOriginalQuestion off", "the setting ignored", {"prompt": "a real question", "off": True}),
    Case("sendOriginalQuestion off, a batch", "the setting honoured for a one-query call only: each search of a "
         "batch still sends ori_question",
         {"prompt": "a real question", "off": True, "queries": ["markdown", "coffee"]}),
    # Not a switch value: refused (at configure, or at the call with a configuration or argument code and no
    # request), or read as off. Never as on.
    Case("sendOriginalQuestion as the string \"false\"", "any non-empty value taken as on, so the prompt is sent "
         "although the user wrote false", {"prompt": "a real question", "off": "false"}),
    # From an outside hunt (L): "ori_question among the arguments" always has a prompt, so a model's ori_question
    # used only where the Session has none (a fallback) was certified. Without a prompt the field is omitted.
    Case("ori_question among the arguments, no prompt", "a model-supplied ori_question argument sent when the "
         "Session has no prompt (the model's paraphrase as a fallback where the field is to be omitted)",
         {"prompt": None, "extra": {"ori_question": "a paraphrase the model wrote"}}, CARRY),
)


def ori_accepted(prompt: str) -> set[str]:
    """Every value seed 001 allows: whitespace collapsed (with or without the ends trimmed) and cut
    to 128 code points, with or without a space the cut leaves at the end."""
    trimmed = " ".join(prompt.split())
    kept_ends = (" " if prompt[:1].isspace() else "") + trimmed + (" " if prompt[-1:].isspace() else "")
    return {v for text in (trimmed, kept_ends) for v in (text[:128], text[:128].rstrip()) if v.strip()}


@check(
    "search.api.ori_question",
    "ori_question is the latest prompt collapsed and cut to 128 code points; omitted when blank or off",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'ori_question is the text of the initiating Session's latest human prompt with whitespace "
    "collapsed and cut to the API's 128-character limit. The API rejects blank or longer values, so a search "
    "without such a prompt omits the field, and sendOriginalQuestion: false disables it.' Characters are "
    "Unicode code points; the seed does not say whether a space left at the cut is kept, so both are accepted. "
    "The model never supplies it: 'Let the model supply ori_question as a tool argument' was rejected, so an "
    "ori_question argument beside queries is refused as WEB_INVALID_ARGUMENTS before any request, or ignored: "
    "without a prompt the field is still omitted.",
    cases=ORI_CASES + OMITTED,
)
async def ori_question(ctx: CheckContext) -> None:
    for case in ORI_CASES:
        ctx.emu.log.clear()
        prompt: str = case["prompt"]
        queries: list[str] = case.params.get("queries", ["markdown"])
        outcome = await search_with_extra(ctx, case, queries, prompt)
        if outcome is None:  # the model's extra argument refused before any request
            continue
        expect_success(outcome, f"{case.name}: search")
        accepted = ori_accepted(prompt)
        for record in each_record(ctx, "search", case.name, len(queries)):
            sent = record.json.get("ori_question")
            require(sent in accepted, f"{case.name}: ori_question differs from the collapsed prompt cut at 128 "
                    f"code points", sent=sent, accepted=sorted(accepted), catches=case.catches)
    for case in OMITTED:
        off = case.params.get("off")
        if off is None:  # on, whatever a row before left: a row after the off rows must not pass for them
            await ctx.configure(send_original_question=True)
        elif off is True:
            await ctx.configure(send_original_question=False)
        elif not await ctx.configure_if_accepted(send_original_question=off):
            continue
        ctx.emu.log.clear()
        searched: list[str] = case.params.get("queries", ["coffee"])
        found = await search_with_extra(ctx, case, searched, case["prompt"])
        if found is None:  # the model's extra argument refused before any request
            continue
        outcome = found
        if off not in (None, True) and not outcome.ok:
            require(outcome.error_code in REFUSED_SETTING_CODES and not ctx.records("search"),
                    f"{case.name}: refused with {outcome.error_code} after {len(ctx.records('search'))} requests; "
                    "expected a configuration or argument error before any request")
            continue
        expect_success(outcome, f"{case.name}: search")
        for record in each_record(ctx, "search", case.name, len(searched)):
            body = record.json
            require("ori_question" not in body, f"{case.name}: ori_question must be omitted", body=body,
                    catches=case.catches)


COUNT = (
    Case("default count, default cap", "count sent as the service default 10 instead of the cap 8",
         {"count": 10, "cap": 8, "sent": 8}),
    Case("cap below count", "count not lowered to searchMaxResults", {"count": 10, "cap": 3, "sent": 3}),
    Case("count below cap", "count always sent as searchMaxResults, ignoring the configured count",
         {"count": 5, "cap": 8, "sent": 5}),
    Case("cap above count", "count raised to searchMaxResults", {"count": 10, "cap": 20, "sent": 10}),
    Case("count 1", "the lower bound mishandled", {"count": 1, "cap": 8, "sent": 1}),
    Case("both 50", "the upper bound clamped below 50", {"count": 50, "cap": 50, "sent": 50}),
    Case("a batch, cap below count", "the cap applied to a one-query call only, not to each search of a batch",
         {"count": 10, "cap": 3, "sent": 3, "queries": ["markdown", "coffee"]}),
    # Each query answers 3 results none of the others has (9 in all): the merge keeps searchMaxResults of them.
    Case("a batch, count below cap", "the merged list cut to min(count, searchMaxResults) instead of "
         "searchMaxResults", {"count": 3, "cap": 8, "sent": 3, "queries": ["markdown", "rate limit", "search api"],
                              "merged": True}),
    # A configured count that is no number from 1 to 50: refused (at configure, or at the call with a
    # configuration or argument code and no request), or sent as an integer within 1-50 and the cap.
    Case("count given as a string", "a count configured as the JSON string \"10\" forwarded as a string",
         {"count": "10", "cap": 20, "hostile": True}),
    Case("count given as true", "a JSON true taken for the count 1 and forwarded as true",
         {"count": True, "cap": 8, "hostile": True}),
    Case("count 51", "the configured count bounded by the cap alone, not by 1-50: 51 sent when the cap allows it",
         {"count": 51, "cap": 60, "hostile": True}),
    Case("count 0", "the lower bound unchecked: a count of 0 sent", {"count": 0, "cap": 8, "hostile": True}),
    # From a hunt (P-B7): the rows above try a string, true and whole numbers out of range, so a settings check that
    # takes a float for an int (7.5 forwarded as count 7.5) was certified.
    Case("count 7.5", "a fractional count accepted as an integer setting and forwarded as count 7.5",
         {"count": 7.5, "cap": 8, "hostile": True}),
    # An audit of the seeds' decisions: count is the deployment's setting, so a count the model adds beside
    # queries is refused (before any request) or ignored.
    Case("count among the arguments", "a model-supplied count argument forwarded into the Search API request (50 "
         "sent) in place of min(configured count, searchMaxResults)",
         {"count": 10, "cap": 8, "sent": 8, "extra": {"count": 50}}, CARRY),
    # From an outside hunt (L): the row above tries 50 only, so a model's count honoured when it lowers the
    # request, or the bound read under another name, was certified. "answered": the value holds the answer's
    # sources (seed 000: one query returns the provider's result), so a count sent right but a value cut to the
    # model's number is caught too; the query has ten results, so eight come back.
    Case("a smaller count among the arguments", "a model-supplied count honoured when below the deployment's (3 "
         "sent, or the value cut to 3 sources, in place of min(configured count 10, searchMaxResults 8) = 8)",
         {"count": 10, "cap": 8, "sent": 8, "extra": {"count": 3}, "answered": True, "queries": ["search api"]},
         CARRY),
    Case("max_results among the arguments", "a model-supplied max_results argument read as the request's result "
         "bound (2 sent, or the value cut to 2 sources, in place of 8)",
         {"count": 10, "cap": 8, "sent": 8, "extra": {"max_results": 2}, "answered": True,
          "queries": ["search api"]}, CARRY),
)


async def _hostile_count(ctx: CheckContext, case: Case) -> None:
    """``case``'s count is no number from 1 to 50: the target refuses it (``configure`` answers an error,
    or the call fails with a configuration or argument code before any request) or sends an integer
    count from 1 to 50, within the cap. Never the value as given, never a crash."""
    if not await ctx.configure_if_accepted(count=case["count"], search_max_results=case["cap"]):
        return
    ctx.emu.log.clear()
    outcome = await ctx.search(["markdown"])
    sent = [r.json.get("count") for r in ctx.records("search") if isinstance(r.json, dict)]
    top = min(50, case["cap"])
    require(all(type(c) is int and 1 <= c <= top for c in sent),
            f"{case.name}: count={sent!r} sent with count={case['count']!r}; expected a refusal or an integer "
            f"from 1 to {top}", catches=case.catches)
    if outcome.ok:
        require(sent, f"{case.name}: accepted, but no Search API request was sent")
    else:
        require(not sent and outcome.error_code in REFUSED_SETTING_CODES,
                f"{case.name}: refused at the call with {outcome.error_code} after {len(sent)} request(s); "
                f"expected {' or '.join(REFUSED_SETTING_CODES)} before any request", catches=case.catches)


@check(
    "search.api.count",
    "Search API count is the configured count lowered to searchMaxResults; need_content is false",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'count is the configured value from 1 to 50, defaulting to the service's 10, unless the "
    "request's result bound is smaller; the tool always sends its limit, 8 by default', and Direct Search "
    "sends 'need_content: false'. So count = min(configured count, searchMaxResults). A configured count that "
    "is no number (a JSON string, true), or no whole number of results (7.5: the seed's count is a number of "
    "results from 1 to 50), is refused (at configure, or WEB_CONFIG_INVALID / WEB_INVALID_ARGUMENTS at the call, "
    "before any request) or sent as an integer from 1 to 50 within the cap, never as given. "
    "The count bounds each request only: a batch's merge 'caps the combined list to searchMaxResults' (seed "
    "000), so it holds more than count sources when more distinct ones were found and the cap allows. count is "
    "the deployment's ('a deployment-owned bound keeps the model schema focused on search input', seed 000): a "
    "count or max_results argument the model adds beside queries, larger or smaller, is refused as "
    "WEB_INVALID_ARGUMENTS before any request, or ignored ('the tool always sends its limit'), and the one query's "
    "value holds the answer's sources.",
    cases=COUNT,
)
async def api_count(ctx: CheckContext) -> None:
    for case in COUNT:
        if case.params.get("hostile"):
            await _hostile_count(ctx, case)
            continue
        await ctx.configure(count=case["count"], search_max_results=case["cap"])
        ctx.emu.log.clear()
        queries: list[str] = case.params.get("queries", ["markdown"])
        outcome = await search_with_extra(ctx, case, queries, None)
        if outcome is None:  # the model's extra argument refused before any request
            continue
        value = expect_success(outcome, f"{case.name}: search")
        records = each_record(ctx, "search", case.name, len(queries))
        if case.params.get("merged"):
            # More than count, not exactly the cap: how many of the rest are kept (duplicates, the cap itself)
            # is search.merge.dedup's and search.merge.truncation's business.
            unique = {s.url for r in observed(records, queries, case["cap"]).values() for s in r.sources}
            got = source_urls(value)
            require(len(got) > case["count"], f"{case.name}: the merged value holds {len(got)} sources of "
                    f"{len(unique)} distinct ones found: count {case['count']} bounds each request, not the "
                    f"merge (searchMaxResults is {case['cap']})", sources=got)
        for record in records:
            body = record.json
            require(body.get("count") == case["sent"],
                    f"{case.name}: count={body.get('count')!r} with count={case['count']}, "
                    f"searchMaxResults={case['cap']}; expected {case['sent']}", body=body, catches=case.catches)
            require(body.get("need_content") is False, f"{case.name}: need_content must be sent as false",
                    body=body)
        if case.params.get("answered"):  # one query: the provider's result, not cut to the model's number
            want = [s.url for s in expected_merge(records, queries, case["cap"]).sources]
            got = source_urls(value)
            require(got == want, f"{case.name}: the value holds {len(got)} sources of the answer's {len(want)}",
                    got=got, expected=want, catches=case.catches)


KEYS = ["count", "need_content", "query"]
API_WIRE = (
    Case("with a prompt", "extra headers (User-Agent, Accept, ...) or extra body keys (localization, ...)",
         {"query": "markdown", "prompt": "what is markdown", "keys": sorted([*KEYS, "ori_question"])}),
    Case("without a prompt", "ori_question sent empty or null", {"query": "coffee", "prompt": None, "keys": KEYS}),
    # From an outside hunt: a prompt cut to 128 characters announced in a body key of its own.
    Case("a prompt over 128 characters", "a cut prompt flagged in an undocumented body key (ori_question_truncated)",
         {"query": "markdown", "prompt": "why does the search api cut my question " * 4,
          "keys": sorted([*KEYS, "ori_question"])}),
    Case("operators", "search operators rewritten or escaped",
         {"query": 'site:docs.example.test "search api" -legacy lang:en after:2025-01-01', "prompt": None,
          "keys": KEYS}),
    Case("surrounding spaces and CJK", "the query trimmed or normalised",
         {"query": "  深度求索  search ", "prompt": None, "keys": KEYS}),
    Case("after an answer that set a cookie", "a client that keeps cookies from one operation to the next (a "
         "reused client sends the earlier answer's cookie back)",
         {"query": "cookie jar", "prompt": None, "keys": KEYS, "cookie": True}),
    Case("128 CJK characters", "the query length counted in UTF-8 bytes (384 here): refused or cut at 128 bytes",
         {"query": "深度求索搜索接口" * 16, "prompt": None, "keys": KEYS}),
    Case("100 astral characters", "the query length counted in UTF-16 units, as JavaScript's length does (200 "
         "here): refused or cut at 128 units", {"query": "😀" * 60 + "𠀀" * 40, "prompt": None, "keys": KEYS}),
    # The service enforces the limit (the emulator answers 400): any outcome, and a request, if one is sent,
    # carries the query whole. Refusing it before sending is left open: the seed puts the check on the service
    # but does not forbid a client the same check.
    Case("over 128 characters", "the query cut to 128 characters by the client before sending",
         {"query": ("how do the DeepSeek Search and Fetch APIs count characters " * 3).strip(),
          "prompt": None, "keys": KEYS, "any_outcome": True}),
    Case("full-width and compatibility characters", "the query NFKC-normalised (ＡＢＣ１２３ sent as ABC123)",
         {"query": "ＡＢＣ１２３ ｶﾀｶﾅ ﬁle ① Ⅻ ㎏", "prompt": None, "keys": KEYS}),
    # No prompt: whether a batch sends ori_question is search.api.ori_question's business.
    Case("a batch of three", "the header or body-key rules kept on one-query calls only (a batch adds an Accept "
         "header or a body key)", {"queries": ["markdown", "coffee", "rate limit"], "prompt": None, "keys": KEYS}),
    # From an outside hunt (L): arguments the model adds beside queries that name body fields. A row each where a
    # reading forwards that one key, so the failing row says which leaked; then other keys at once (the seed's
    # operators and response fields as argument names), for readings no row names a key of.
    Case("localization among the arguments", "a model-supplied localization argument sent as the body's "
         "localization (none is configured)",
         {"query": "markdown", "prompt": None, "keys": KEYS, "extra": {"localization": "203.0.113.9"}}, CARRY),
    Case("need_content among the arguments", "a model-supplied need_content: true sent in place of false",
         {"query": "markdown", "prompt": None, "keys": KEYS, "extra": {"need_content": True}}, CARRY),
    Case("several other keys among the arguments", "an argument beside queries that names a search operator or an "
         "API field (site, language, date, summary) folded into the query or sent as a body key",
         {"query": "markdown", "prompt": None, "keys": KEYS,
          "extra": {"site": "docs.example.test", "language": "zh", "date": "2026-01-01", "summary": True}}, CARRY),
)
# An empty search answer that also sets a cookie for the emulator's host, every path.
_COOKIE_ANSWER = Status(200, body=b'{"results": []}', headers={"Set-Cookie": "session=dsweb-wire-row; Path=/"})


@check(
    "search.api.wire",
    "Search API requests carry only Authorization and Content-Type and exactly the documented body fields",
    seed="001",
    requires=(WS, API),
    provider="api",
    rule="Seed 001: 'requests send only the documented authorization and JSON content type', 'Direct Search "
    "sends query, count, need_content: false, and ori_question' (ori_question omitted without a prompt), "
    "'it does not send localization', and 'Queries pass through unchanged'. Beyond HTTP framing (Host, "
    "Content-Length or Transfer-Encoding, Connection) the header set is exactly {Authorization: Bearer "
    "<key>, Content-Type: application/json}, and the body key set exactly those fields, on every request "
    "of a batch too. 'The service enforces the 1–128 Unicode-character query constraint': a query is sent "
    "as given, never normalised or cut, and one of up to 128 characters (code points) is sent whatever its "
    "length in bytes or UTF-16 units; the answer to one over 128 characters is the service's, so any outcome "
    "is accepted for it (a refusal before sending too), but a request carries it whole. 'Direct retrieval emits "
    "no auxiliary model-request event because Harness makes no such request': no Messages or Responses request. "
    "need_content is false on every request. The body is the deployment's, not the model's (seed 000: 'a "
    "deployment-owned bound keeps the model schema focused on search input'): an argument the model adds beside "
    "queries (localization, need_content, a site or language) is refused as WEB_INVALID_ARGUMENTS before any "
    "request, or ignored, so the body and the query stay as above.",
    cases=API_WIRE,
)
async def api_wire(ctx: CheckContext) -> None:
    for case in API_WIRE:
        if case.params.get("cookie"):
            ctx.emu.inject("search", _COOKIE_ANSWER)
            expect_success(await ctx.search(["set a cookie"]), f"{case.name}: the search answered with a cookie")
        ctx.emu.log.clear()
        queries: list[str] = case.params.get("queries") or [case["query"]]
        found = await search_with_extra(ctx, case, queries, case["prompt"])
        if found is None:  # the model's extra argument refused before any request
            continue
        outcome = found
        if not case.params.get("any_outcome"):
            expect_success(outcome, f"{case.name}: search")
        if case.params.get("any_outcome") and not outcome.ok and not ctx.records("search"):
            continue  # refused before sending (see the row)
        records = each_record(ctx, "search", case.name, len(queries))
        for record in records:
            require_tools_api_headers(record, case.name)
            body = record.json
            require(isinstance(body, dict) and sorted(body) == case["keys"],
                    f"{case.name}: body keys {sorted(body) if isinstance(body, dict) else body!r}, "
                    f"expected {case['keys']}", body=body, catches=case.catches)
            require(body["need_content"] is False, f"{case.name}: need_content={body['need_content']!r}, "
                    "expected false", body=body, catches=case.catches)
        sent = sorted(str(record.json["query"]) for record in records)
        require(sent == sorted(queries), f"{case.name}: queries {sent!r}, expected them unchanged",
                expected=sorted(queries), catches=case.catches)
        await require_no_model_request(ctx, case.name)


# From an outside hunt: the wire rules kept on first, unpaced requests only. A retry rebuilt with a header of
# its own or a body from the settings, and a paced path through a client that keeps its default headers, were
# certified: no check looked at a retried or paced request's wire.
SCHEDULED_WIRE = (
    Case("a retried request's headers", "a retry that carries a header of its own (an attempt counter, an "
         "idempotency key)", {"retries": 2, "judge": "headers"}),
    Case("a retried request's body", "a retry whose body is rebuilt from the settings (count 10, not lowered to "
         "searchMaxResults 8) or otherwise differs from the first attempt's", {"retries": 2, "judge": "body"}),
    # From a mutation survivor: with retries 2 and one failure, a target counting the first attempt in still
    # retried once. Retries 1 must retry too. One query: a budget shared by a batch's searches is open (a
    # two-query batch would spend its one retry on the first query and fail the second).
    Case("a retried request with one retry allowed", "the configured retries counted with the first attempt "
         "(retries 1 read as one attempt in all, so nothing is retried)",
         {"retries": 1, "judge": "body", "queries": 1}),
    # From an outside hunt (M1): the rows above send no prompt, so a retry rebuilt without ori_question matched a
    # first attempt without it; and no row compared a retry's URL. With a prompt, the retry must repeat both.
    Case("a retried request's URL and ori_question", "a retry sent to another URL (an attempt counter in the query "
         "string) or rebuilt without ori_question (a leaner second try)",
         {"retries": 2, "judge": "same", "prompt": "what is the search api used for?", "queries": 1}),
    Case("paced requests", "paced requests sent through a client that keeps its default headers (User-Agent, "
         "Accept, Accept-Encoding) or adds body keys", {"pacing_qps": 5.0, "judge": "headers"}),
    # From a hunt (P-B2): the row above judges the body's key names only, and sends no prompt. A queue-style pacer
    # that rebuilds the body when the slot comes (count not lowered to searchMaxResults, ori_question dropped,
    # need_content turned true) was certified. With a prompt, each paced body's values are judged too.
    Case("paced requests' body values", "a paced request whose body is rebuilt when its slot comes: count 10 sent "
         "(not lowered to searchMaxResults 8), ori_question dropped although the search has a prompt, or "
         "need_content sent true", {"pacing_qps": 5.0, "judge": "values",
                                    "prompt": "what  is the search api\tused for?"}),
)
SCHEDULED_QUERIES = ["search api", "rate limit"]


def _scheduled_check(capability: str, ctx_key: str, name: str, title: str) -> None:
    cases = tuple(c for c in SCHEDULED_WIRE if ctx_key in c.params)

    @check(
        name,
        title,
        seed="001",
        requires=(WS, API, capability),
        provider="api",
        rule="Seed 001: 'requests send only the documented authorization and JSON content type', and 'Direct "
        "Search sends query, count, need_content: false, and ori_question', with count 'the configured value "
        "... unless the request's result bound is smaller'. Retries and pacing change when a request is sent, "
        "not what it is: a retry is the same request again (its headers exactly Authorization and "
        "Content-Type, its body the first attempt's), and a paced request carries exactly those two headers "
        "and the documented body keys, with the values an unpaced search sends (count lowered to "
        "searchMaxResults, need_content false, and for a search with a prompt its ori_question). Configure's "
        "retries counts the requests after the first attempt: retries 1 is one retry (judged on a one-query "
        "search, since whether a batch shares the budget is open). 'Direct retrieval ... appends /search': a "
        "retry goes to the first attempt's URL, query string included, and a search with a prompt repeats its "
        "ori_question.",
        cases=cases,
    )
    async def scheduled_wire(ctx: CheckContext) -> None:
        await ctx.configure(count=10, search_max_results=8)
        for case in (c for c in SCHEDULED_WIRE if ctx_key in c.params):  # read at run time: a test may cut the table
            await ctx.configure_opt_in(**{ctx_key: case[ctx_key]})
            ctx.fresh()
            queries = SCHEDULED_QUERIES[: case.params.get("queries", len(SCHEDULED_QUERIES))]
            if ctx_key == "retries":  # each query answered 503 once (asking for no wait), then normally
                for query in queries:
                    fault = Status(503, headers={"Retry-After": "0"})
                    ctx.emu.inject("search", fault, when=query_match("search", query))
            expect_success(await ctx.search(queries, case.params.get("prompt")), f"{case.name}: search", case.catches)
            await ctx.settle()
            records = ctx.records("search")
            want = 2 if ctx_key == "retries" else 1  # the first attempt and its one retry, or the paced request
            for query in queries:
                sent = [r for r in records if isinstance(r.json, dict) and r.json.get("query") == query]
                require(len(sent) == want, f"{case.name}: {len(sent)} requests for {query!r}, expected {want}")
                for i, record in enumerate(sent):
                    what = f"{case.name}: request {i + 1} for {query!r}"
                    if case["judge"] == "same":  # path, query string and body (its ori_question) repeated
                        first = sent[0]
                        require(isinstance(first.json, dict) and "ori_question" in first.json, f"{what}: the first "
                                "attempt carries no ori_question although the search has a prompt")
                        require((record.path, record.query) == (first.path, first.query), f"{what}: sent to "
                                f"{record.path}?{record.query}, the first attempt to {first.path}?{first.query}",
                                catches=case.catches)
                        require(record.json == first.json, f"{what}: body {record.json!r}, expected the first "
                                f"attempt's {first.json!r}", catches=case.catches)
                    elif case["judge"] == "headers":
                        require_tools_api_headers(record, what)
                        require(sorted(record.json) == KEYS, f"{what}: body keys {sorted(record.json)}, "
                                f"expected {KEYS}", catches=case.catches)
                    elif case["judge"] == "values":  # the whole body: every value as an unpaced search sends it
                        require_tools_api_headers(record, what)
                        accepted = ori_accepted(case["prompt"])
                        body = record.json
                        require(sorted(body) == sorted([*KEYS, "ori_question"]) and body["count"] == 8
                                and body["need_content"] is False and body["ori_question"] in accepted,
                                f"{what}: body {body!r}, expected query {query!r}, count 8 (count 10 lowered to "
                                f"searchMaxResults 8), need_content false and ori_question one of "
                                f"{sorted(accepted)!r}", body=body, catches=case.catches)
                    else:
                        require(record.json.get("count") == 8, f"{what}: count {record.json.get('count')!r}, "
                                "expected 8 (count 10 lowered to searchMaxResults 8)", catches=case.catches)
                        require(record.json == sent[0].json, f"{what}: body {record.json!r}, expected the first "
                                f"attempt's {sent[0].json!r}", catches=case.catches)


_scheduled_check(CAP_RETRY, "retries", "search.api.retry.wire",
                 "With retries on, a retried Search API request is the first one again: the same headers and body")
_scheduled_check(CAP_PACING, "pacing_qps", "search.api.pacing.wire",
                 "With pacing on, paced Search API requests carry only Authorization and Content-Type and the "
                 "documented body fields")


MODEL_ROUTES = ("messages", "responses")  # the emulator's model APIs (its other routes retrieve)


async def require_no_model_request(ctx: CheckContext, what: str) -> None:
    """Seed 001: 'Direct retrieval emits no auxiliary model-request event because Harness makes no such
    request': a Search or Fetch API call sends nothing to a Messages or Responses endpoint, also not while
    or after it answers (the emulator is let go idle first, so a request still in flight is seen)."""
    await ctx.settle()
    models = [str(r.path) for route in MODEL_ROUTES for r in ctx.records(route)]
    require(not models, f"{what}: the call also sent a model request ({', '.join(models)}); direct retrieval makes "
            "none", paths=models)


PASSTHROUGH = (
    Case("one query", "a single query merged or labelled like a batch", {"queries": ["markdown"]}),
    Case("one query twice", "exact duplicates searched twice, or labelled as a batch",
         {"queries": ["coffee", "coffee"]}),
)


@check(
    "search.single.passthrough",
    "One distinct query returns the provider's result as is; exact duplicates cause one upstream request",
    seed="000",
    requires=(WS,),
    rule="Seed 000: 'A one-item array returns the provider's result without multi-query formatting', and "
    "'Exact duplicate strings consume the input-array bound but cause only one provider call.'",
    cases=PASSTHROUGH,
)
async def single_passthrough(ctx: CheckContext) -> None:
    for case in PASSTHROUGH:
        queries = case["queries"]
        ctx.emu.log.clear()
        value = expect_success(await ctx.search(queries), f"search {queries}")
        records = ctx.records(ctx.search_route)
        require(len(records) == 1, f"{queries}: expected exactly one upstream request, saw {len(records)}")
        expected = expected_merge(records, queries, ctx.config.search_max_results)
        got = source_urls(value)
        want = [s.url for s in expected.sources]
        require(got == want, f"{queries}: sources differ from the provider's result", got=got, expected=want)
        require("### " not in str(value.get("content") or ""), f"{queries}: a single query must not be labelled")
