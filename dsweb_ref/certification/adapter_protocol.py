"""The adapter protocol: how the certification suite drives an implementation written in any language.

An *adapter* is a program the suite starts (``dsweb certify --adapter "CMD ARGS"``; the command string
is split with POSIX shell rules, no shell runs it). It wraps the implementation under test and speaks
**JSON lines**: one UTF-8 JSON object per line, ``\\n``-terminated, on its stdin (suite -> adapter) and
its stdout (adapter -> suite). A response line holds at most 64 MiB and :data:`MAX_LINE_VALUES` brackets,
braces and commas outside strings. Nothing else may be written to stdout; stderr is free for logs (the
suite keeps its tail for error reports, with key-looking values redacted).

The adapter starts with a minimal environment: ``PATH``, ``HOME``, locale, temp-directory and
Python path variables (``PYTHONPATH``, ``VIRTUAL_ENV``) only, plus what ``--adapter-env NAME[=VALUE]``
passes. Credentials of whoever runs the suite (``DEEPSEEK_API_KEY``, ...) are not inherited: the
only key an adapter needs is the emulator's test key, which ``configure`` hands over.

The suite also sets every proxy variable (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and their
lower-case forms) to ``http://127.0.0.1:PORT`` of a trap of its own (one per variable) and
``NO_PROXY``/``no_proxy`` to ``127.0.0.1,localhost,::1``, for the whole run: an adapter's own
clients reach the loopback emulator directly whichever way they read them, while a ``web_fetch``
that routes a page through a proxy is caught by ``ssrf.proxy.ignored`` (a proxy would resolve and
dial on the fetcher's behalf, outside its address policy). An in-process target sees the same
variables in its process environment for the run.

Several instances of the adapter may run at once: the suite runs checks side by side (``--jobs N``),
each on its own adapter process that says ``hello`` and is configured for that check alone. An adapter
must therefore keep no state outside its process (no fixed port, lock or file shared between runs);
``--jobs 1`` runs one check at a time (a process that gave an error is replaced by a fresh one).

Requests (suite -> adapter)::

    {"id": 7, "method": "web_search", "params": {...}}

``id`` is a positive integer, unique per run. Every request gets exactly one response line carrying
the same ``id``::

    {"id": 7, "result": ...}                                          success
    {"id": 7, "error": {"code": "WEB_PROVIDER_ERROR", "message": "..."}}  failure; code is a WEB_* string
    {"id": 7, "cancelled": true}                                      the call was cancelled (see "cancel")

Requests may overlap: the suite sends ``cancel`` while a ``web_search`` is in flight, so the adapter
must keep reading stdin while calls run, and may answer in any order. Write each response line
atomically (one write, then flush). A null ``result``, ``error`` or ``cancelled`` beside a non-null one
counts as absent (``{"id": 7, "result": {...}, "error": null}`` is a success).

Methods
-------

``hello`` (params ``{}``) -> ``{"name": str, "version": str, "capabilities": [str, ...]}``
    Sent first, right after the suite starts the adapter, and answered within the adapter's start
    deadline: 20 seconds by default (``HELLO_TIMEOUT``), ``--adapter-start-timeout SECONDS`` to
    allow more. The deadline covers everything before the answer (interpreter start-up, imports),
    so answer ``hello`` first, from what is known without loading the implementation, and only then
    import heavy libraries: a busy CI runner can take many seconds to import a large one. An adapter
    that exits, writes something else, or misses the deadline stops the run before any check
    (``dsweb certify`` prints one line with the reason and its stderr tail, and exits 2). The suite
    starts the adapter in a process group of its own and, when the run is interrupted, sends SIGTERM
    to that group (SIGKILL half a second later if it still runs).

    Capabilities the suite knows (a check needing an undeclared one is reported *skipped*, never
    passed):

    - ``web_search`` - the model-facing web_search tool (``queries`` array, seed 000)
    - ``tool-schema`` - the ``tool_schema`` method below: what the model is shown of ``web_search``
    - ``web_fetch`` - the model-facing web_fetch tool
    - ``messages-search`` - search through the Anthropic-compatible Messages API (``provider: "messages"``)
    - ``search-api`` - search through the Search API ``POST {tools_base}/search`` (``provider: "api"``)
    - ``fetch-api`` - fetch through the Fetch API ``POST {tools_base}/fetch`` (``provider: "api"``)
    - ``cancel`` - the ``cancel`` method below
    - ``ssrf-test-mode`` - ``web_fetch`` (and ``evidence_search``'s own page fetches) honour ``test_network``
      (below) for the SSRF checks and ``evidence.html_page``
    - ``evidence-search`` - the seed 002 evidence ``web_search`` (method ``evidence_search`` below)
    - ``standalone-search`` - the standalone model-backed web_search (seed 003, ``standalone_search``)
    - ``standalone-resolve`` - its account and model selection (seed 003, ``standalone_resolve``)
    - ``standalone-save`` - saving its assigned search model into the user's configuration (seed 003,
      ``standalone_save``)
    - ``standalone-usage`` - ``standalone_search``'s ``value`` carries the search's ``usage`` (seed 003, below)
    - ``standalone-tools`` - the main model's tool list for a configuration (seed 003, ``standalone_tools``)
    - ``fetch-selection`` - ``configure`` ``fetch_provider`` selects the fetch provider alone, beside the switch
      (seed 001, below)
    - ``standalone-notice`` - ``standalone_tools``'s ``value`` carries the ``notices`` that runtime's assembly told
      the user (seed 003, below)
    - ``evidence-cite`` - the source links code attaches to an answer (seed 002, ``evidence_cite``)
    - ``scripted-search`` - web_search over the emulator's conformance search route (``provider: "scripted"``,
      see "Conformance search route" below); enables the ``search.differential.*`` checks
    - ``retry`` - Search API retries of 408, 429 and 5xx as ``configure`` ``retries`` allows (seed 001); a
      Fetch API request may be retried on those too, never on another 4xx
    - ``pacing`` - Search API requests paced to ``configure`` ``pacing_qps`` (seed 001)
    - ``fetch-pacing`` - ``configure`` ``pacing_qps`` paces Fetch API requests too (the same rate, per API; seed
      001: "Search and Fetch each have an account-wide 5 QPS limit")
    - ``localization`` - ``configure`` ``localization`` forwarded to the Search API (seed 001)
    - ``summary-budget`` - Search API summaries shown to the model under the ``configure`` budgets (seed 001)
    - ``quality-metadata`` - each Search API source keeps ``summary``, ``site_name``, ``rerank_score`` and
      ``authority`` in its ``metadata`` exactly as served, with no cutoff (seed 001)
    - ``account-route`` - with ``configure`` ``auth: "account"``, every DeepSeek request (Search, Fetch,
      Messages) carries ``account_token`` where it would carry ``api_key``; with ``"api_key"``, the key
      (seed 001: a Session on the DeepSeek account route sends its account token instead)
    - ``shipped-defaults`` - ``configure`` ``"defaults": true`` (below): every setting it does not carry keeps
      the target's shipped default (seeds 000 and 001 decide several)
    - ``live-settings`` - the ``settings_save`` method below: settings a user saves while the target runs reach
      the next operation, and an operation under way keeps the one snapshot it resolved (seed 001)
    - ``request-record`` - the ``recorded_requests`` method below: the requests the implementation recorded
      (its request record or session log), so the suite can compare what was recorded with what was sent (seed 001)

``configure`` -> ``{}``
    Sent before each check (repeatedly; each replaces the previous configuration). Params::

        {
          "messages_base": "http://127.0.0.1:PORT/anthropic/v1",  # POST {messages_base}/messages
          "tools_base": "http://127.0.0.1:PORT/v1/tools",         # POST {tools_base}/search, /fetch
          "api_key": "...",                # an emulator test key: send as Authorization: Bearer
          "provider": "messages" | "api" | "scripted",  # "api" = the new Web Search API switch: Search+Fetch APIs
          "auth": "api_key" | "account",   # account-route: "account" sends account_token instead of api_key
          "account_token": "",             # account-route: the emulator's account token ("" when none is given)
          "search_max_queries": 4,         # searchMaxQueries (0 may come: refuse it, never read "no cap")
          "search_max_results": 8,         # searchMaxResults (also the Search API count bound)
          "send_original_question": true,  # sendOriginalQuestion
          "count": 10,                     # Search API count setting; send min(count, search_max_results)
          "model": "deepseek-v4-flash",    # Messages model
          "max_tokens": 4096,              # Messages max_tokens
          "max_uses": 5,                   # Messages web_search server tool max_uses
          "timeout_s": 30.0,               # one deadline per upstream request (both protocols) and per web_fetch
          "fetch_max_bytes": 5000000,      # web_fetch's own fetcher: the decoded body cap, in bytes (it bounds
                                           # what is read too: no body, a redirect's included, read to its end past it)
          "fetch_max_redirects": 5,        # web_fetch's own fetcher: redirect hops it may follow (0: none)
          "openai_base": "http://127.0.0.1:PORT/v1",  # POST {openai_base}/responses (seed 003)
          "scripted_base": "",             # provider "scripted": POST {scripted_base}/search (else "")
          "retries": 0,                    # retry: how many retries of 408/429/5xx a search may make
          "pacing_qps": null,              # pacing: Search API requests per second (null = no pacing);
                                           #   fetch-pacing: Fetch API requests too, the same rate per API
          "localization": null,            # localization: IP literal to send as localization (null = unset)
          "search_model_text": "snippet",  # summary-budget: what the model sees per source: "snippet" | "summary"
          "search_summary_max_chars": 1000,   # summary-budget: characters of one source's summary shown
          "search_summary_total_chars": 4000, # summary-budget: summary characters shown over the whole call
          "standalone_stream": false,      # seed 003: ask standalone_search for a streamed answer (optional)
          "fetch_provider": null           # fetch-selection: "http" | "api" selected alone (null: as provider)
        }

    Every key is a deployment setting a check relies on; use each as given. Unknown keys must be
    ignored. ``tools_base`` is a complete base: some checks hand over another deployment's
    (``http://127.0.0.1:PORT/deepseek/tools``, ``.../api/v1/tools``), and the request must go to exactly
    that base plus ``/search`` or ``/fetch``, never to a fixed ``/v1/tools`` path on its host.
    ``messages_base`` is complete too: the request goes to exactly it plus ``/messages``, with no
    ``/v1`` added (an SDK that appends ``/v1/messages`` to its own base must be given a path instead). A Search
    API answer of 200 that is no search answer (no ``results`` list, an error envelope, a result that is
    not an object or has no text ``url``) is a failure, not an empty search.

    A target declaring ``shipped-defaults`` may also get ``"defaults": true`` with only some of these keys
    (the bases, ``api_key`` and the setting a check is about): every setting absent from that configure
    keeps the target's own shipped default, what a deployment that wrote no such setting gets (not the
    value above, nor the previous configure's); an absent ``provider`` means no search selection was
    written. Seeds 000 and 001 decide some of those defaults (searchMaxQueries 4, searchMaxResults 8, count
    10, sendOriginalQuestion on, the new-API switch off). Without ``"defaults"``, configure carries every key.

    On the wire the checks expect (seed 001): Search and Fetch requests carry, beyond HTTP framing
    (Host, Content-Length or Transfer-Encoding, Connection), only ``Authorization: Bearer
    <api_key>`` and ``Content-Type: application/json``; a Search body is exactly ``query``, ``count``,
    ``need_content: false`` and, with a usable prompt, ``ori_question``; a Fetch body is exactly
    ``{"url": <the URL unchanged>}``. A Messages request presents the key (``Authorization: Bearer``
    or ``x-api-key``) with a JSON Content-Type (other headers are free), and its body carries
    ``model``, ``max_tokens``, ``messages`` (one user message carrying the query), ``thinking:
    {"type": "disabled"}`` and ``tools: [{"type": "web_search_20250305", "name": "web_search",
    "max_uses": <max_uses>}]``, and no ``tool_choice`` (other Messages fields are open). No request is
    retried (unless ``retries`` allows it, below) and no redirect (any 3xx) is followed.

    ``retries``, ``pacing_qps`` and ``localization`` are seed 001's opt-in scheduling; their defaults
    are the fail-fast behaviour every target keeps (one request per query, nothing paced, no
    ``localization`` key, a batch's queries started together). A target declaring ``retry``
    retries a Search request answered 408, 429 or 5xx at most ``retries`` times, never before a
    sent ``Retry-After`` (seconds or HTTP date, on any of those statuses), not every time at once
    when none is sent, and never 402 or another 4xx; with retries, ``timeout_s`` is the one
    deadline of the whole search (every attempt and every wait), not one per attempt. One
    declaring ``pacing`` starts Search requests, retries included, no faster than ``pacing_qps``
    (a number, a fraction too), waiting for a slot, not failing: at one or more, no more than
    ``pacing_qps`` starts in any one second; under one, two starts at least 1 / ``pacing_qps``
    seconds apart, calls made one after another too; one declaring ``fetch-pacing`` also starts no more
    than ``pacing_qps`` Fetch requests in any one second, waiting for a slot, not failing (judged on
    ``web_fetch`` calls, at once and one after another; the evidence pipeline's Fetch requests count against the
    account too, unjudged; whether Search and Fetch share one pacer or each has its own is open; without
    ``pacing`` declared, ``pacing_qps`` is judged for Fetch requests only). One declaring
    ``localization`` sends an IPv4 or IPv6 literal as the body's ``localization`` (no key when unset)
    and refuses anything else (an error answer to ``configure``, or WEB_CONFIG_INVALID /
    WEB_INVALID_ARGUMENTS to the call).
    Cancelling a call while it waits to retry or for a slot answers at once and sends nothing more.

    ``search_model_text`` and the two summary budgets are seed 001's model-facing summary. With
    ``"snippet"`` (the default, and always for a target not declaring ``summary-budget``) the model
    sees each source's snippet and never its summary. A target declaring ``summary-budget`` shows,
    with ``"summary"``, each source's Search API ``summary`` instead: at most
    ``search_summary_max_chars`` characters of it per source and ``search_summary_total_chars`` over
    every source of the call (all its queries); a "character" is a Unicode code point (an astral
    character is one, never split into surrogates). A longer summary is cut on a character boundary
    and ends in a visible marker (any non-blank text; it counts toward the budget); ``truncated`` is
    then true. Which sources get the total first, and whether whitespace is folded, are open. The
    value keeps ``snippet`` and ``metadata.summary`` exactly as served and records, on each source
    with a summary, ``summary_shown``: the summary exactly as the text shows it ("" if none of it).

    ``standalone_stream`` (seed 003 leaves streaming open): true asks ``standalone_search`` for a
    streamed answer (``"stream": true``, server-sent events). A target may ignore it and answer
    plainly: the emulator tells a streamed row's answer as events only to a request that asks for
    them, and as the same JSON otherwise. A target that streams must read the same answer from the
    events, and must report a stream that ends before its final event (``message_stop``,
    ``response.completed``), is cut off, or carries an ``error`` event as a tool error.

    With ``ssrf-test-mode``, ``configure`` may also carry::

        "test_network": {
          "resolve": {"name.test": [["93.184.215.14"], ["10.0.0.7"]]},  # lookup n gets answer n, the last repeats
          "dial": {"93.184.215.14": 41234, "10.0.0.7": 41240}              # address -> loopback port
        }

    While it is set, ``web_fetch`` (and, with ``provider: "messages"``, the page fetches of
    ``evidence_search``) must resolve names only through ``resolve`` (an unlisted name does not
    resolve), judge the resolved addresses with its own unchanged address policy, and connect to
    an address it accepted by connecting to ``127.0.0.1:<dial[address]>`` (an unlisted address refuses
    the connection). A dial is matched by address value, not by its text: whatever spelling the
    fetcher dials (IPv6 compressed or not, bracketed or with a zone id, an IPv4-mapped IPv6 address
    for its IPv4 address, IPv4 in any numeric form ``inet_aton`` reads, such as ``127.1`` or
    ``0x7f.0.0.1``) reaches the port of the address it names, as a real connection would.
    Environment proxies stay ignored. The suite dials every address it considers
    non-public to a trap that counts connections: any connection there fails the SSRF check.
    The SSRF profile also holds the fetcher to the limits ``configure`` hands over: the whole fetch
    (every hop and read) ends with a ``WEB_*`` error within ``timeout_s`` even when a server never
    answers or drips its answer; a decoded body over ``fetch_max_bytes`` (declared, undeclared or
    gzip/deflate-compressed) is cut to the cap or refused, and the cap bounds what is read as well:
    a body far over it, undeclared or a redirect's, is never read to its end (stop reading, close the
    connection); at most ``fetch_max_redirects`` hops are followed. No seed fixes the codes, so any
    ``WEB_*`` error is accepted there.

``web_search`` -> ``{"text": str, "value": object}``
    Params ``{"arguments": {"queries": [...]}, "latest_prompt": str | null}``: one tool call with the
    model's arguments, passed through unvalidated; ``latest_prompt`` is the conversation's latest human
    prompt (the source of ``ori_question``). ``text`` is what the model would see; ``value`` follows
    ``schemas/web_search.output.schema.json``. A tool error is an ``error`` response with the WEB_*
    code, never a result: ``WEB_INVALID_ARGUMENTS`` for rejected arguments (no query, more than
    ``search_max_queries``), ``WEB_PROVIDER_ERROR`` for a provider failure (HTTP error status,
    rejected credential, unreadable body, a redirect).

``tool_schema`` -> ``{"text": str, "value": {"name": str, "description": str, "input_schema": object,
"guidance": str | null}}``
    Params ``{"tool": "web_search"}``: what the model is shown of the tool under the current configuration:
    its ``name``, its ``description``, its ``input_schema`` (the JSON Schema of its arguments) and
    ``guidance``, the system-prompt text the implementation adds for it (null when it adds none). The
    checks validate arguments against ``input_schema`` (with the draft its ``$schema`` names, 2020-12 by
    default; a ``$ref`` outside it is not resolved) and read ``searchMaxQueries`` in the descriptions;
    ``text`` is free.

``web_fetch`` -> ``{"text": str, "value": object}``
    Params ``{"arguments": {"url": str}}``; ``value`` follows ``schemas/web_fetch.output.schema.json``.

``evidence_search`` -> ``{"text": str, "value": object}``
    Params ``{"arguments": {"query": str | [str, ...]}, "context": {"id": str, "local_names": [str, ...],
    "question"?: str}, "latest_prompt"?: str | null}``: one call of the seed 002 evidence pipeline (search,
    validate, rank, diversify, fetch, passages), with the Search and Fetch providers that ``configure``
    selects. ``latest_prompt`` is the conversation's latest human message, as for ``web_search``: each
    Search API request of the call carries it as ``ori_question`` (seed 001) unless the switch is off. ``context.id``
    names the conversation: calls with the same id share retry memory (a query that found nothing may
    not be fired again: not the same, ignoring case, spacing and invisible format characters such as
    U+200B; not one whose words were all in it; and, when ``question`` carries the user's question, not
    one that only adds numbers or names found neither in that question nor in earlier evidence);
    ``local_names`` are names the caller marks local (never sent to a search engine). ``text`` groups
    evidence lines by query, each line carrying its source URL, or says ``[needs_retry]``; ``value``
    follows ``schemas/evidence_search.output.schema.json``.

``standalone_search`` -> ``{"text": str, "value": object}``
    Params ``{"arguments": {"query": str}, "protocol": "messages" | "responses", "latest_prompt"?: str |
    null}``: one call of the standalone web_search (seed 003) as the model made it, arguments unvalidated;
    ``latest_prompt``, when sent, is the conversation's latest human prompt, which the search never carries.
    The search is one model request with model ``deepseek-v4-flash`` and the configured key to
    ``POST {messages_base}/messages`` (``web_search_20250305`` tool) or ``POST
    {openai_base}/responses`` (``web_search`` tool), carrying only the query: no system prompt or
    ``instructions``, one user message with one text part. ``text`` is the model-visible JSON
    ``{"summary", "sources": [{"title", "url"}], "truncated"?}``; ``value`` is any object (the
    reference puts ``{"result", "usage"}`` there), and with ``standalone-usage`` an object whose ``usage``
    is ``{"source": "web-search", "connection": str, "model": str, "input_tokens": int, "output_tokens":
    int, "http_requests": int}`` (more keys allowed): the search's own usage, owned by the connection and
    model it was set to use. A tool error is an ``error`` response with a WEB_* code.

``standalone_resolve`` -> ``{"text": str, "value": resolution}``
    Params ``{"document": object, "environ_set": [str, ...]}``: the account and model selection
    for a configuration document (the format of ``dsweb solo resolve``: ``web_search_model`` at
    the top level or in ``agent``, ``connection_access`` the only connections that may be used,
    each account's ``source`` ``"local"`` (default), ``"broker"`` or ``"extension"``, whose model
    brings no local search credential); ``environ_set`` names the key variables that are set.
    ``value`` is ``{"status": "selected" | "none" | "invalid", "route": {"account", "protocol",
    "url", "model", "api_key_env"} | null, "reason": str | null, "reference": str | null}`` (more
    keys, such as the reference's ``skipped`` and ``notice``, are allowed and not compared);
    ``text`` is free. For ``none`` the ``reason`` says which of seed 003's cases left no search tool, in
    this protocol's words: ``offline`` (offline mode), ``not_allowed`` (an explicit tool allow-list
    without ``web_search``), ``explicit_off`` (the current, search-capable account says ``web_search =
    false``: no fallback), ``no_search_account`` (no configured, search-enabled account); for
    ``invalid`` any non-empty reason is accepted. A malformed document is an error ``WEB_CONFIG_INVALID``.

``standalone_tools`` -> ``{"text": str, "value": {"tools": [tool, ...]}}``
    Params ``{"document": object, "environ_set": [str, ...]}`` (as for ``standalone_resolve``): the Chat
    Completions ``tools`` array the main model would be given by a runtime assembled for that configuration,
    in order. Each tool is an ordinary function tool ``{"type": "function", "function": {"name": str,
    "description": str, "parameters": object}}``; the standalone search, when the selection registers it, is
    the one named ``web_search``, whose ``parameters`` is a JSON Schema object with a string property
    ``query``. Seed 003: switching only between two valid search models (automatic included) leaves the
    array unchanged; when the selection registers no search (offline mode, an allow-list without
    ``web_search``, an explicit off, an unusable assigned model) no ``web_search`` is listed. The other
    tools, the descriptions' wording and the schema beyond ``query`` are the implementation's; ``text`` is
    free. A malformed document is an error ``WEB_CONFIG_INVALID``. With ``standalone-notice``, ``value``
    also carries ``notices``: ``[str, ...]``, the notices saying web_search is unavailable that this runtime's
    assembly raised, one string each, before any user interface merges repeats (other messages stay out).
    Seed 003: an assigned search model whose connection is gone, switched off or without credentials
    registers no search and is told once, so that list holds exactly one notice for it (its wording is
    yours) and none for a valid or automatic selection; each assembly is a new runtime and raises it again.

``evidence_cite`` -> ``{"text": str, "value": object}``
    Params ``{"answer": str, "values": [value, ...]}``: ``answer`` is the text the agent layer wrote and
    ``values`` the ``evidence_search`` values of the conversation's calls (each following
    ``schemas/evidence_search.output.schema.json``). ``text`` is the answer with the source links code
    attaches after it (seed 002): the answer first (trailing whitespace may go), then a link to each URL of
    the values' ``sources`` (a source two values share may be linked once or twice), and no link to a URL
    the values name only elsewhere (a result the pipeline refused or left out, ``tried.dropped`` and
    ``tried.rejected``, or one written in a title): a title's brackets or a URL's parentheses never change
    a link's target. Any Markdown form is accepted:
    ``[title](url)`` (with ``<url>``, ``\\)`` or ``%29`` for a parenthesis), ``<url>`` or a bare URL, in any
    list or none; ``value`` is free.

``standalone_save`` -> ``{"text": str, "value": {"user": str, "effective": str | null, "overridden_by": ...}}``
    Params ``{"user": str | null, "project": str | null, "value": str}``: save ``value`` as the assigned
    search model (``[agent] web_search_model``, seed 003) into the user's configuration file whose text is
    ``user`` (null: the file does not exist yet), beside a project ``reasonix.toml`` whose text is
    ``project`` (null: none). ``value.user`` is the user file's text after the save; ``effective`` the value
    in effect and ``overridden_by`` ``"project"`` when the project file sets the field (else null and
    ``effective`` the saved value). A user file that is not TOML, or a value that is not ``auto``, empty or
    ``CONNECTION/MODEL``, may be refused with ``WEB_CONFIG_INVALID``; ``text`` is free.

``settings_save`` -> ``{}``
    Capability ``live-settings``. Params: any of ``configure``'s setting keys, with the same names and meanings
    (``test_network`` is no setting and never comes; ``provider`` is ``"messages"`` or ``"api"``); a key absent
    keeps its current value. It models a user saving settings while the implementation runs (seed 001: "The
    switch defaults off and takes effect after saving, because the web service reads both selections for each
    operation", and "Each operation resolves one settings snapshot, including its endpoint and credentials"):
    a save is no restart: the suite does not rebuild the target as ``configure`` does, so what must change is
    what the running tools resolve at their next operation. Every operation that starts after the ``{}`` answer
    resolves the saved values (``provider`` writes both the search and the fetch selection, as the switch does;
    after a ``"defaults": true`` configure a saved key counts as written); an operation already under way keeps
    the snapshot it resolved for every request it still sends (a retry of the same search included). How a
    target gets there is its own (clients rebuilt on save, pooled per key and base, settings read afresh per
    operation); what it does for an operation started before the answer arrives is open. Answer once the saved
    values are in effect, at once or once the operations under way have ended (the seed does not say which; keep
    reading stdin either way). An error answer (``WEB_CONFIG_INVALID``) is for a value ``configure`` would refuse
    too, and keeps the settings as they were; the check saves only values a configure gives, so refusing one fails
    it. A target without the capability is never sent it.

``recorded_requests`` -> ``{"requests": [{"provider": str, "method": str, "url": str, "body": str}, ...]}``
    Capability ``request-record``. Params ``{}``. The outgoing requests the implementation recorded (its request
    record, session log or whatever it persists) since the last ``configure``, in the order recorded: ``provider``
    who sent it (any name), ``method`` the HTTP method, ``url`` the request URL, ``body`` the recorded body as
    text (JSON text for a JSON body). Seed 001: "The retained Messages path explicitly sends thinking: {type:
    'disabled'} and records that same body before dispatch": every Messages search request is recorded, with the
    body it is sent with (the same JSON once parsed, ``thinking`` included; spacing, key order and escaping are
    the target's), before it is sent,
    so the record is there while the request is in flight and after a dispatch that fails. Open: the record's
    format beyond these four fields (other fields are ignored), what else is recorded (Search and Fetch API
    requests, replies, events: present or absent), the record's URL and provider name, and order across
    requests; no seed says whether a record may hold a credential, so none is judged (the reference's never
    holds a header or a credential, and a report never quotes a record that shows the key). It is sent while a
    tool call is in flight (as ``cancel`` and ``settings_save`` are): answer at once, without waiting for calls
    under way. A target without the capability is never sent it.

``cancel`` -> ``{}``
    Params ``{"id": <id of an in-flight web_search/web_fetch>}``. Answer the cancel request at once;
    the cancelled call must then answer ``{"id": n, "cancelled": true}`` (or an error with code
    ``WEB_ABORTED``) **only after every upstream HTTP request it started has settled** (closed or
    completed). A cancel may come before the call has begun (read in the same go as the call): the call
    still answers, cancelled (an asyncio task cancelled before its first step never runs the call's own
    ``except CancelledError``; answer it from a done callback). Cancelling an unknown or finished id is not
    an error. The same holds for a batch
    that fails: its answer leaves only after every sibling request is closed. The suite checks this
    with no time tolerance: at the instant it reads the answer line it asks the kernel whether the
    TCP connection of each request the emulator is still serving has been closed by the adapter;
    one that is still established fails the check. Close first (and await the close), then answer.

``shutdown`` -> ``{}``
    Answer, then exit with status 0. The suite closes stdin afterwards; EOF on stdin also means exit.

Profiles
--------

A run certifies named profiles (``dsweb certify --profile NAME``; without it every profile gets a
verdict). A target is certified for a profile only when it declares every capability the profile
requires and every check of the profile passes; a missing capability (a skipped check) withholds
it. The report names every profile and why one was not certified.

- ``seed-000-web-search``: ``web_search``, ``tool-schema``, ``cancel``, ``scripted-search``, and ``search-api``
  or ``messages-search``
- ``seed-001-search-api``: ``web_search``, ``search-api``
- ``seed-001-messages``: ``web_search``, ``messages-search``
- ``seed-001-fetch-api``: ``web_fetch``, ``fetch-api``, ``cancel``
- ``seed-001-retry``, ``seed-001-pacing``, ``seed-001-localization``, ``seed-001-summary-budget``,
  ``seed-001-quality-metadata`` (opt-in): ``web_search``, ``search-api`` and that capability
- ``seed-001-fetch-pacing`` (opt-in): ``web_fetch``, ``fetch-api``, ``fetch-pacing``
- ``seed-001-account-route`` (opt-in): ``web_search``, ``search-api``, ``account-route``
- ``shipped-defaults`` (opt-in): ``web_search``, ``search-api``, ``messages-search``, ``shipped-defaults``
- ``seed-001-live-settings`` (opt-in): ``web_search``, ``search-api``, ``live-settings`` (its switch row also
  needs ``messages-search``, and its web_fetch steps ``web_fetch`` and ``fetch-api``, as do the key and base rows'
  web_fetch steps; the key row's Messages steps need ``messages-search``, the in-flight row ``retry``; a row or
  step whose capability is missing is not run)
- ``seed-001-request-record`` (opt-in): ``web_search``, ``messages-search``, ``request-record``
- ``seed-001-fetch-selection`` (opt-in): ``web_fetch``, ``fetch-api``, ``ssrf-test-mode``, ``fetch-selection``
- ``seed-002-evidence``: ``web_search``, ``search-api``, ``fetch-api``, ``evidence-search``
- ``seed-002-evidence-html``: ``web_search``, ``messages-search``, ``ssrf-test-mode``, ``evidence-search``
- ``ssrf``: ``web_fetch``, ``ssrf-test-mode``
- ``seed-003-standalone``: ``standalone-search``, ``standalone-resolve``
- ``seed-003-deadline`` (opt-in, run only when named: ``--profile seed-003-deadline``): ``standalone-search``;
  a Messages and a Responses search whose answers the emulator holds for about 95 s, each of which must fail
  as a tool error at the 90-second limit (not before it, and not answer after it); the check may take up to
  250 s (a target may run the two one after the other)
- ``seed-003-settings-save``: ``standalone-save``
- ``seed-003-usage``: ``standalone-search``, ``standalone-usage``
- ``seed-003-tool-list``: ``standalone-tools``
- ``seed-003-notice``: ``standalone-tools``, ``standalone-notice``
- ``seed-002-citations``: ``evidence-cite``

Conformance search route
------------------------
Answer text, a per-query ``truncated`` flag and failure codes cannot be scripted through the DeepSeek
routes, so the emulator also serves a search backend whose answers the suite scripts per scenario. With
``provider: "scripted"``, register a search provider for it in your seam (a few lines) and run your
``web_search`` consumer unchanged on top::

    POST {scripted_base}/search      body {"query": str, "max_results": int}    (no credential)
    200  {"content"?: str, "sources": [{"url", "title"?, "snippet"?, "published_at"?}], "truncated": bool}
    4xx/5xx {"error": {"code": "WEB_...", "message": str}}

Return the 200 body as your seam's search result, unchanged; fail the search with ``error.code`` on any
other status (``WEB_PROVIDER_ERROR`` if it has none). The suite configures one scenario per call (its own
``scripted_base``, ``search_max_results`` and ``search_max_queries``) and compares the call's ``value``
and its ``### <query>`` labels in ``text`` with the reference merge. The route answers a scenario's
searches only once all of them are in flight, then one at a time in a scripted order; after the first
failure it answers nothing more until your batch aborts the rest. Scenarios come from a seed
(``dsweb certify --seed N``; fixed by default); a failure names the seed and a shrunk scenario.

Every suite wait is bounded: an adapter that does not answer in time, exits, or writes a line that
is not a JSON object with a known ``id`` makes the running check an *error* (not a failure) with the
reason, and the suite moves on or stops; it never hangs.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from typing import Any, Final

HELLO_TIMEOUT = 20.0  # seconds from starting the adapter to its hello answer (--adapter-start-timeout)

__all__ = [
    "CAPABILITIES",
    "CAP_ACCOUNT_ROUTE",
    "CAP_CANCEL",
    "CAP_EVIDENCE_CITE",
    "CAP_EVIDENCE_SEARCH",
    "CAP_FETCH_API",
    "CAP_FETCH_PACING",
    "CAP_FETCH_SELECTION",
    "CAP_LIVE_SETTINGS",
    "CAP_LOCALIZATION",
    "CAP_MESSAGES_SEARCH",
    "CAP_PACING",
    "CAP_QUALITY_METADATA",
    "CAP_REQUEST_RECORD",
    "CAP_RETRY",
    "CAP_SCRIPTED_SEARCH",
    "CAP_SEARCH_API",
    "CAP_SHIPPED_DEFAULTS",
    "CAP_SSRF_TEST_MODE",
    "CAP_STANDALONE_NOTICE",
    "CAP_STANDALONE_RESOLVE",
    "CAP_STANDALONE_SAVE",
    "CAP_STANDALONE_SEARCH",
    "CAP_STANDALONE_TOOLS",
    "CAP_STANDALONE_USAGE",
    "CAP_SUMMARY_BUDGET",
    "CAP_TOOL_SCHEMA",
    "CAP_WEB_FETCH",
    "CAP_WEB_SEARCH",
    "HELLO_TIMEOUT",
    "ProtocolError",
    "decode_line",
    "encode_line",
    "stdin_reader",
]

CAP_WEB_SEARCH: Final = "web_search"
CAP_WEB_FETCH: Final = "web_fetch"
CAP_MESSAGES_SEARCH: Final = "messages-search"
CAP_SEARCH_API: Final = "search-api"
CAP_FETCH_API: Final = "fetch-api"
CAP_CANCEL: Final = "cancel"
CAP_SSRF_TEST_MODE: Final = "ssrf-test-mode"
CAP_EVIDENCE_SEARCH: Final = "evidence-search"
CAP_STANDALONE_SEARCH: Final = "standalone-search"
CAP_STANDALONE_RESOLVE: Final = "standalone-resolve"
CAP_STANDALONE_SAVE: Final = "standalone-save"
CAP_STANDALONE_USAGE: Final = "standalone-usage"
CAP_STANDALONE_TOOLS: Final = "standalone-tools"
# seed 003: a runtime assembled for an unusable assigned search model registers no search and notifies once
CAP_STANDALONE_NOTICE: Final = "standalone-notice"
CAP_EVIDENCE_CITE: Final = "evidence-cite"
CAP_SCRIPTED_SEARCH: Final = "scripted-search"
CAP_RETRY: Final = "retry"
CAP_PACING: Final = "pacing"
# seed 001: Fetch has an account-wide limit too; configure's pacing_qps paces Fetch API requests as well
CAP_FETCH_PACING: Final = "fetch-pacing"
CAP_LOCALIZATION: Final = "localization"
CAP_SUMMARY_BUDGET: Final = "summary-budget"
CAP_QUALITY_METADATA: Final = "quality-metadata"
CAP_TOOL_SCHEMA: Final = "tool-schema"
# seed 001: a Session on the DeepSeek account route sends its account token instead of the API key
CAP_ACCOUNT_ROUTE: Final = "account-route"
# seeds 000/001 decide the defaults a deployment ships with: configure's "defaults": true leaves them in force
CAP_SHIPPED_DEFAULTS: Final = "shipped-defaults"
# seed 001: each operation resolves one settings snapshot; settings_save changes it between operations
CAP_LIVE_SETTINGS: Final = "live-settings"
# seed 001: the Messages path records the body it sends before dispatch; recorded_requests reads that record
CAP_REQUEST_RECORD: Final = "request-record"
# seed 001: configuration can still select either fetch provider alone, whichever way the switch is set
CAP_FETCH_SELECTION: Final = "fetch-selection"
CAPABILITIES: Final = (
    CAP_WEB_SEARCH,
    CAP_WEB_FETCH,
    CAP_MESSAGES_SEARCH,
    CAP_SEARCH_API,
    CAP_FETCH_API,
    CAP_CANCEL,
    CAP_SSRF_TEST_MODE,
    CAP_EVIDENCE_SEARCH,
    CAP_STANDALONE_SEARCH,
    CAP_STANDALONE_RESOLVE,
    CAP_STANDALONE_SAVE,
    CAP_STANDALONE_USAGE,
    CAP_STANDALONE_TOOLS,
    CAP_STANDALONE_NOTICE,
    CAP_EVIDENCE_CITE,
    CAP_SCRIPTED_SEARCH,
    CAP_RETRY,
    CAP_PACING,
    CAP_FETCH_PACING,
    CAP_LOCALIZATION,
    CAP_SUMMARY_BUDGET,
    CAP_QUALITY_METADATA,
    CAP_TOOL_SCHEMA,
    CAP_ACCOUNT_ROUTE,
    CAP_SHIPPED_DEFAULTS,
    CAP_LIVE_SETTINGS,
    CAP_REQUEST_RECORD,
    CAP_FETCH_SELECTION,
)


class ProtocolError(Exception):
    """The adapter broke the protocol (bad line, unknown id, exited, timed out)."""


def encode_line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


# Brackets, braces and commas outside strings one response line may hold (each JSON value but the first needs
# one): far above any answer (a fetched page is one string), and what bounds the memory parsing a line costs
# (a 64 MiB line of "[]," would take over a gigabyte).
MAX_LINE_VALUES = 1_000_000


def decode_line(line: bytes) -> dict[str, Any]:
    """One response line as a dict with an int ``id``; ProtocolError otherwise."""
    from ..providers._deepseek_http import too_many_values  # here: adapters import this module, not httpx

    if too_many_values(line, 2 * MAX_LINE_VALUES):  # its bound is on half the limit: containers and separators
        raise ProtocolError(f"adapter wrote a line of more than {MAX_LINE_VALUES:,} JSON containers and separators "
                            f"(outside strings): {line[:200]!r}")
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"adapter wrote a line that is not JSON: {line[:200]!r}") from exc
    except RecursionError as exc:  # json's decoder recurses per level: a line of 100,000 "[" is valid JSON
        raise ProtocolError(f"adapter wrote JSON nested too deeply: {line[:200]!r}") from exc
    if not isinstance(message, dict) or isinstance(message.get("id"), bool) or not isinstance(message.get("id"), int):
        raise ProtocolError(f"adapter wrote a line that is not a response object with an integer id: {line[:200]!r}")
    return message


async def stdin_reader() -> asyncio.StreamReader:
    """stdin as a stream, for an adapter written in Python (scripts/adapter_minimal.py). The loop watches a
    pipe (how the suite starts an adapter), a socket or a terminal; anything else (/dev/null, a file) is read
    in a thread: the loop cannot watch it, and would wait for ever."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    fd = sys.stdin.fileno()
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or sys.stdin.isatty():
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader

    def pump() -> None:
        for chunk in iter(lambda: os.read(fd, 1 << 16), b""):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, daemon=True).start()
    return reader
