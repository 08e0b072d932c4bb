// The studio: pick an assistant, see its graph, run it on a thread (chat view for graphs with
// `messages`), answer interrupts, travel through the thread's checkpoints; threads,
// assistants and the store have views of their own.
import { useCallback, useEffect, useMemo, useState } from "react";
import { AssistantsView } from "./AssistantsView.jsx";
import { ChatView } from "./ChatView.jsx";
import { GraphView, NodePanel } from "./GraphView.jsx";
import { InterruptPanel, pendingInterrupts } from "./InterruptPanel.jsx";
import { JsonBox } from "./JsonBox.jsx";
import { DEFAULT_MODES, RunPanel, runOptions } from "./RunPanel.jsx";
import { StoreView } from "./StoreView.jsx";
import { ThreadsView } from "./ThreadsView.jsx";
import { Timeline } from "./Timeline.jsx";
import { loadConnection, makeClient, saveConnection } from "./api.js";
import { useRun } from "./useRun.js";
import { hasMessagesKey, parseJson, pretty, shortId } from "./util.js";

const VIEWS = [["graph", "Graph & run"], ["threads", "Threads"], ["assistants", "Assistants"], ["store", "Store"]];

function readHash() {
  const q = new URLSearchParams(window.location.hash.slice(1));
  return { view: q.get("view") || "graph", assistant: q.get("assistant") || "", thread: q.get("thread") || "" };
}

export function App() {
  const [conn, setConn] = useState(loadConnection);
  const client = useMemo(() => makeClient(conn), [conn]);
  const start = readHash();
  const [view, setView] = useState(start.view);
  const [assistants, setAssistants] = useState([]);
  const [assistantId, setAssistantId] = useState(start.assistant);
  const [threadId, setThreadId] = useState(start.thread);
  const [graph, setGraph] = useState(null);
  const [xray, setXray] = useState(false);
  const [schemas, setSchemas] = useState(null);
  const [state, setState] = useState(null);
  const [history, setHistory] = useState([]);
  const [error, setError] = useState("");
  const [selectedNode, setSelectedNode] = useState("");
  const [before, setBefore] = useState(() => new Set());
  const [after, setAfter] = useState(() => new Set());
  const [modes, setModes] = useState(DEFAULT_MODES);
  const [configText, setConfigText] = useState("");
  const [streaming, setStreaming] = useState(true);
  const [sent, setSent] = useState(""); // the human turn of the running chat run, until the state has it
  const [chosenPane, setPane] = useState(null); // null: the graph's default pane
  const [showConn, setShowConn] = useState(false);
  const run = useRun(client);

  const assistant = assistants.find((a) => a.assistant_id === assistantId || a.graph_id === assistantId) || assistants[0];
  const aid = assistant?.assistant_id;

  const loadAssistants = useCallback(async () => {
    try {
      const found = await client.assistants.search({});
      setAssistants(found);
      setError("");
    } catch (e) {
      setError(`cannot list assistants at ${client.base}: ${e.message}`);
    }
  }, [client]);
  useEffect(() => {
    loadAssistants();
  }, [loadAssistants]);

  useEffect(() => {
    if (!aid) return;
    let live = true;
    client.assistants.graph(aid, xray ? "true" : "").then((g) => live && setGraph(g), (e) => live && setError(e.message));
    client.assistants.schemas(aid).then((s) => live && setSchemas(s), () => live && setSchemas(null));
    return () => {
      live = false;
    };
  }, [client, aid, xray]);

  const refreshThread = useCallback(async (tid = threadId) => {
    if (!tid) {
      setState(null);
      setHistory([]);
      return;
    }
    try {
      const [st, hist] = await Promise.all([client.threads.state(tid), client.threads.history(tid, 200)]);
      setState(st);
      setHistory(hist);
    } catch (e) {
      setError(e.message);
    }
  }, [client, threadId]);
  useEffect(() => {
    refreshThread();
  }, [refreshThread]);

  useEffect(() => {
    const q = new URLSearchParams();
    q.set("view", view);
    if (assistant) q.set("assistant", assistant.graph_id === assistant.name ? assistant.graph_id : assistant.assistant_id);
    if (threadId) q.set("thread", threadId);
    window.history.replaceState(null, "", `#${q}`);
  }, [view, assistant, threadId]);

  const chat = hasMessagesKey(schemas?.input_schema) || hasMessagesKey(schemas?.state_schema);
  const pane = chosenPane === "chat" && !chat ? "run" : chosenPane ?? (chat ? "chat" : "run");
  const panes = [...(chat ? [["chat", "Chat"]] : []), ["run", "Run"], ["timeline", "Timeline"], ["state", "State"]];

  const ensureThread = async () => {
    if (threadId) return threadId;
    const t = await client.threads.create({ metadata: { graph_id: assistant.graph_id } });
    setThreadId(t.thread_id);
    return t.thread_id;
  };

  const startRun = async (extra) => {
    if (!assistant) return;
    try {
      const tid = await ensureThread();
      const stream = [...new Set([...modes, "tasks", ...(chat ? ["messages-tuple"] : [])])];
      const body = { assistant_id: aid, stream_mode: stream, stream_subgraphs: true, ...runOptions(configText), ...extra };
      if (before.size) body.interrupt_before = [...before];
      if (after.size) body.interrupt_after = [...after];
      if (!("input" in body) && !("command" in body)) body.input = null;
      const done = () => refreshThread(tid).finally(() => setSent(""));
      if (streaming) await run.start(tid, body, done);
      else await run.wait(tid, body, done);
    } catch (e) {
      setError(e.message);
    }
  };

  const toggleBreakpoint = (node, kind) => {
    const [set, put] = kind === "before" ? [before, setBefore] : [after, setAfter];
    const next = new Set(set);
    if (next.has(node)) next.delete(node);
    else next.add(node);
    put(next);
  };

  const interrupted = new Set(pendingInterrupts(state).map((i) => i.node));
  const nodes = (graph?.nodes || []).map((n) => n.id).filter((id) => !id.startsWith("__") && !id.includes(":"));
  const messages = Array.isArray(state?.values?.messages) ? state.values.messages : [];

  return (
    <div className="app">
      <a className="skip" href="#main">Skip to content</a>
      <header>
        <h1>stepgraph studio</h1>
        <label htmlFor="assistant-select">Assistant</label>
        <select id="assistant-select" value={aid || ""} onChange={(e) => { setAssistantId(e.target.value); setThreadId(""); setSelectedNode(""); setPane(null); }}>
          {assistants.map((a) => (
            <option key={a.assistant_id} value={a.assistant_id}>{a.name}{a.name !== a.graph_id ? ` (${a.graph_id})` : ""}</option>
          ))}
        </select>
        <span className="muted small" data-testid="thread-id">{threadId ? `thread ${shortId(threadId)}` : "no thread"}</span>
        <button type="button" onClick={() => { setThreadId(""); }} disabled={run.running}>New thread</button>
        <button type="button" onClick={() => setShowConn(!showConn)} aria-expanded={showConn}>Connection</button>
      </header>
      {showConn && <Connection conn={conn} onSave={(c) => { saveConnection(c); setConn(c); setShowConn(false); }} />}
      <nav aria-label="views">
        {VIEWS.map(([id, text]) => (
          <button key={id} type="button" aria-current={view === id ? "page" : undefined} onClick={() => setView(id)}>{text}</button>
        ))}
      </nav>
      {error && <p className="error" role="alert" data-testid="error">{error} <button type="button" onClick={() => setError("")}>dismiss</button></p>}
      <main id="main">
        {view === "graph" && assistant && (
          <div className="studio">
            <section className="graph-pane" aria-label="graph">
              <div className="row">
                <h2>{assistant.graph_id}</h2>
                <label className="inline">
                  <input type="checkbox" checked={xray} onChange={(e) => setXray(e.target.checked)} /> expand subgraphs (xray)
                </label>
              </div>
              <GraphView graph={graph} active={run.active} counts={run.counts} seen={run.seen}
                breakpoints={{ before, after }} selected={selectedNode} interrupted={interrupted}
                onSelect={(n) => setSelectedNode(selectedNode === n ? "" : n)} />
              <NodePanel node={selectedNode} graph={graph} breakpoints={{ before, after }} onToggle={toggleBreakpoint} />
            </section>
            <section className="side" aria-label="thread">
              <InterruptPanel state={state} running={run.running}
                onResume={(value) => startRun({ command: { resume: value } })}
                onContinue={() => startRun({ input: null })} />
              <div role="tablist" aria-label="panes" className="tabs" onKeyDown={(e) => {
                // arrow keys move between the tabs (the focused tab is the selected one)
                if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
                const ids = panes.map(([id]) => id);
                const next = ids[(ids.indexOf(pane) + (e.key === "ArrowRight" ? 1 : ids.length - 1)) % ids.length];
                setPane(next);
                document.getElementById(`tab-${next}`)?.focus();
              }}>
                {panes.map(([id, text]) => (
                  <button key={id} role="tab" type="button" aria-selected={pane === id} id={`tab-${id}`}
                    aria-controls="pane" tabIndex={pane === id ? 0 : -1} onClick={() => setPane(id)}>{text}</button>
                ))}
              </div>
              <div role="tabpanel" id="pane" aria-labelledby={`tab-${pane}`}>
                {pane === "chat" && (
                  <ChatView messages={messages} tokens={run.tokens} running={run.running} sent={sent}
                    onSend={(text) => {
                      setSent(text);
                      startRun({ input: { messages: [{ type: "human", content: text }] } });
                    }} />
                )}
                {pane === "run" && (
                  <RunPanel schemas={schemas} run={run} modes={modes} setModes={setModes} onStart={startRun}
                    configText={configText} setConfigText={setConfigText} streaming={streaming} setStreaming={setStreaming} />
                )}
                {pane === "timeline" && (
                  <Timeline client={client} threadId={threadId} history={history} nodes={nodes} running={run.running}
                    onReplay={(cid) => startRun({ input: null, checkpoint_id: cid })}
                    onForked={async (cid, thenRun) => {
                      if (thenRun && cid) await startRun({ input: null, checkpoint_id: cid });
                      else await refreshThread();
                    }} />
                )}
                {pane === "state" && <pre className="json small" data-testid="thread-state">{pretty(state)}</pre>}
              </div>
              {pane === "chat" && (run.running || run.error) && (
                <p role="status" className="muted small">{run.running ? "running..." : ""}{run.error && <span className="error">{run.error}</span>}</p>
              )}
            </section>
          </div>
        )}
        {view === "threads" && (
          <ThreadsView client={client} currentThread={threadId} graphId={assistant?.graph_id}
            onOpen={(tid, go) => { setThreadId(tid); if (go) setView("graph"); }} />
        )}
        {view === "assistants" && (
          <AssistantsView client={client} assistants={assistants} reload={loadAssistants} selected={aid}
            onSelect={(id) => setAssistantId(id)} />
        )}
        {view === "store" && <StoreView client={client} />}
      </main>
    </div>
  );
}

function Connection({ conn, onSave }) {
  const [base, setBase] = useState(conn.base);
  const [headers, setHeaders] = useState(pretty(conn.headers || {}));
  const parsed = parseJson(headers);
  return (
    <form className="connection" aria-label="connection" onSubmit={(e) => {
      e.preventDefault();
      if (parsed.ok) onSave({ base, headers: parsed.value || {} });
    }}>
      <div className="field">
        <label htmlFor="conn-base">API URL</label>
        <input id="conn-base" value={base} onChange={(e) => setBase(e.target.value)} />
      </div>
      <JsonBox label="Headers sent with every call (JSON), e.g. Authorization" value={headers} onChange={setHeaders} rows={2} />
      <button type="submit" disabled={!parsed.ok}>Save</button>
    </form>
  );
}
