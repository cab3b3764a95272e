// The realtime stream (GET /events, text/event-stream) read with fetch, not EventSource: the
// browser's EventSource cannot send an Authorization header, and putting the access token in the
// URL would leave it in logs and history. fetch sends the bearer token like every other call,
// refreshes it on 401, and resumes after a dropped or ended stream with Last-Event-ID, so no event
// is skipped.
//
//   const stream = openEventStream(api, {cursor, path ("/events"; the courier app: "/courier/events"),
//                                         onEvent(event), onState("live"|"waiting")});
//   stream.close();

export function parseEventStream(text, emit) {
  // Parse complete events in text; returns the unparsed rest. emit({id, event, data, retry}).
  const blocks = text.split(/\r\n\r\n|\n\n|\r\r/);
  const rest = blocks.pop();
  for (const block of blocks) {
    const event = {id: null, event: "message", data: [], retry: null};
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (!line || line.startsWith(":")) { continue; }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) { value = value.slice(1); }
      if (field === "data") { event.data.push(value); } else if (field === "id") { event.id = value; }
      else if (field === "event") { event.event = value; } else if (field === "retry") { event.retry = Number(value); }
    }
    emit({id: event.id, event: event.event, data: event.data.join("\n"), retry: event.retry});
  }
  return rest;
}

export function openEventStream(api, options) {
  const controller = new AbortController();
  let lastId = options.cursor == null ? null : String(options.cursor);
  let retry = 1000;
  let closed = false;
  const state = options.onState || function () {};

  async function once() {
    const headers = {"Accept": "text/event-stream", "Authorization": await api.authorization()};
    if (lastId !== null) { headers["Last-Event-ID"] = lastId; }
    const response = await fetch(options.path || "/events", {headers: headers, signal: controller.signal, cache: "no-store"});
    if (response.status === 401) { await api.refresh(); return; }
    if (!response.ok) {
      const after = Number(response.headers.get("Retry-After") || "0");
      if (after) { retry = after * 1000; }
      throw new Error("stream answered " + response.status);
    }
    state("live");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) { break; }
      buffer = parseEventStream(buffer + decoder.decode(chunk.value, {stream: true}), function (message) {
        if (message.retry) { retry = message.retry; }
        if (message.id !== null) { lastId = message.id; }
        if (!message.data) { return; }
        let parsed;
        try { parsed = JSON.parse(message.data); } catch (e) { return; }
        try { options.onEvent(parsed); } catch (e) { console.error(e); }
      });
    }
  }

  (async function loop() {
    while (!closed) {
      try { await once(); } catch (e) {
        if (closed || e.name === "AbortError") { return; }
        if (e.status === 401 || (e.problem && e.status)) { state("signed-out"); return; }
      }
      if (closed) { return; }
      state("waiting");
      await new Promise((resolve) => setTimeout(resolve, retry));
    }
  })();

  return {
    close() { closed = true; controller.abort(); },
    get lastId() { return lastId; },
  };
}
