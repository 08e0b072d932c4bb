// One run at a time on the selected thread: streams it, tracks the running nodes (from the
// `tasks` events, subgraph ones as "parent:child"), the tasks per node, streamed message
// tokens, and the events for the log; cancel aborts the stream and cancels the run.
import { useCallback, useRef, useState } from "react";
import { splitEvent } from "./util.js";

const MAX_EVENTS = 400;

export function useRun(client) {
  const [running, setRunning] = useState(false);
  const [events, setEvents] = useState([]);
  const [active, setActive] = useState({});
  const [counts, setCounts] = useState({});
  const [seen, setSeen] = useState(() => new Set());
  const [tokens, setTokens] = useState({}); // message id -> {text, chunks, node}
  const [error, setError] = useState("");
  const [runId, setRunId] = useState("");
  const abort = useRef(null);
  const current = useRef({ threadId: "", runId: "" });

  const start = useCallback(
    async (threadId, body, onDone) => {
      setRunning(true);
      setError("");
      setEvents([]);
      setActive({});
      setCounts({});
      setSeen(new Set());
      setTokens({});
      setRunId("");
      const ctrl = new AbortController();
      abort.current = ctrl;
      current.current = { threadId, runId: "" };
      let n = 0;
      const onEvent = (event, data) => {
        const { mode, path } = splitEvent(event);
        if (mode === "metadata" && data?.run_id) {
          current.current.runId = data.run_id;
          setRunId(data.run_id);
        }
        if (mode === "tasks" && data && typeof data === "object") {
          const keys = [path.length ? [...path, data.name].join(":") : data.name];
          if (path.length) keys.push(path[0]);
          const starting = "input" in data && !("result" in data) && !("error" in data);
          if (starting) {
            setActive((a) => ({ ...a, [keys[0]]: (a[keys[0]] || 0) + 1 }));
            setCounts((c) => ({ ...c, [keys[0]]: (c[keys[0]] || 0) + 1 }));
            setSeen((s) => new Set([...s, ...keys]));
          } else {
            setActive((a) => ({ ...a, [keys[0]]: Math.max(0, (a[keys[0]] || 0) - 1) }));
          }
        }
        // messages-tuple: [chunk, metadata] per token ("messages/partial" of the plain mode
        // carries whole messages, not tokens: it is only logged)
        if (mode === "messages" && Array.isArray(data) && data.length === 2 && !Array.isArray(data[1])) {
          const [chunk, meta] = data;
          if (chunk && chunk.id && typeof chunk.content === "string") {
            setTokens((t) => {
              const had = t[chunk.id] || { text: "", chunks: 0, node: meta?.langgraph_node };
              return { ...t, [chunk.id]: { ...had, text: had.text + chunk.content, chunks: had.chunks + 1 } };
            });
          }
        }
        if (mode === "error") setError(typeof data === "string" ? data : data?.message || JSON.stringify(data));
        n += 1;
        setEvents((ev) => (ev.length >= MAX_EVENTS ? ev : [...ev, { n, event, mode, path, data }]));
      };
      try {
        await client.runs.stream(threadId, body, onEvent, ctrl.signal);
      } catch (e) {
        if (e.name !== "AbortError") setError(e.message);
      } finally {
        setRunning(false);
        setActive({});
        abort.current = null;
        onDone?.();
      }
    },
    [client],
  );

  // the same run without streaming (POST .../runs/wait): only its final values
  const wait = useCallback(
    async (threadId, body, onDone) => {
      setRunning(true);
      setError("");
      setEvents([]);
      setActive({});
      setCounts({});
      setSeen(new Set());
      setTokens({});
      setRunId("");
      const ctrl = new AbortController();
      abort.current = ctrl;
      current.current = { threadId, runId: "" };
      try {
        const { stream_mode: _modes, stream_subgraphs: _sub, ...rest } = body;
        const out = await client.runs.wait(threadId, rest, ctrl.signal);
        setEvents([{ n: 1, event: "result", mode: "result", path: [], data: out }]);
      } catch (e) {
        if (e.name !== "AbortError") setError(e.message);
      } finally {
        setRunning(false);
        abort.current = null;
        onDone?.();
      }
    },
    [client],
  );

  const cancel = useCallback(async () => {
    const { threadId, runId: id } = current.current;
    try {
      if (threadId && id) await client.runs.cancel(threadId, id);
    } catch (e) {
      setError(e.message);
    }
    abort.current?.abort();
  }, [client]);

  return { running, events, active, counts, seen, tokens, error, runId, start, wait, cancel };
}
