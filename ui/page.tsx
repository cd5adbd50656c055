import { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import {
  isRemoveUIMessage,
  isUIMessage,
  uiMessageReducer,
} from "@langchain/langgraph-sdk/react-ui";
import { type DragEvent, type FormEvent, useCallback, useEffect, useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { z } from "zod/mini";
import components, { ImageSource } from "./components.js";
import "./page.css";

/*
 * The page of `tableminds ui` (and of `serve`, at /ui/): ask over a table on the same LangGraph
 * API the SDK uses. It streams a run with LangGraph's React hook, shows the progress lines the
 * CLI prints, and draws the UI messages the graphs push with the components Studio loads.
 */

const GRAPHS = ["table_qa", "mom", "mcts", "orchestrator"] as const;
/** The run's `review`: where it pauses for a person (settings/configuration.ts). */
const REVIEWS = { off: "no pause", code: "the code", answer: "the answer", both: "both" } as const;
type Review = keyof typeof REVIEWS;
const KEY_STORE = "tableminds-api-key";

const SourceSchema = z.looseObject({ upload: z.string(), name: z.string() });
type Source = z.infer<typeof SourceSchema>;
const UploadReplySchema = z.object({ source: SourceSchema });
const ProblemSchema = z.looseObject({ detail: z.string() });
const ProgressSchema = z.object({ event: z.literal("progress"), line: z.nullable(z.string()) });
const ReviewSchema = z.looseObject({
  kind: z.enum(["code", "answer"]),
  code: z.optional(z.string()),
  answer: z.optional(z.string()),
  problem: z.optional(z.string()),
});
const ThreadSchema = z.looseObject({
  thread_id: z.string(),
  metadata: z.looseObject({ title: z.optional(z.string()), graph_id: z.optional(z.string()) }),
});
type Thread = z.infer<typeof ThreadSchema>;

type UiMessage = ReturnType<typeof uiMessageReducer>[number];
interface PageState extends Record<string, unknown> {
  question?: string;
  ui?: UiMessage[];
}

/** The problem an API answer states (`{"detail": ...}`), or its status. */
async function problemOf(response: Response): Promise<string> {
  const body = ProblemSchema.safeParse(await response.json().catch(() => null));
  return body.success ? body.data.detail : `HTTP ${response.status}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function KeyForm({ onKey }: { onKey: (key: string) => void }) {
  const [value, setValue] = useState("");
  return (
    <form
      className="tm-key"
      onSubmit={(e) => {
        e.preventDefault();
        onKey(value.trim());
      }}
    >
      <label>
        This server asks for an API key{" "}
        <input type="password" value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Use key</button>
    </form>
  );
}

function ReviewPanel({
  review,
  onDecide,
}: {
  review: z.infer<typeof ReviewSchema>;
  onDecide: (decision: unknown) => void;
}) {
  const shown = (review.kind === "code" ? review.code : review.answer) ?? "";
  const [text, setText] = useState(shown);
  return (
    <section className="tm-review" aria-label={`review the ${review.kind}`}>
      <h3>
        Review the {review.kind} before it {review.kind === "code" ? "runs" : "is final"}
      </h3>
      {review.problem ? <p className="tm-error">{review.problem}</p> : null}
      <textarea
        aria-label={review.kind}
        value={text}
        rows={review.kind === "code" ? 12 : 3}
        onChange={(e) => setText(e.target.value)}
      />
      <div className="tm-actions">
        <button type="button" onClick={() => onDecide("approve")}>
          Approve
        </button>
        <button
          type="button"
          disabled={text === shown || !text.trim()}
          onClick={() => onDecide({ action: "edit", value: text })}
        >
          Use my edit
        </button>
        <button type="button" onClick={() => onDecide({ action: "reject", reason: "" })}>
          Reject
        </button>
      </div>
    </section>
  );
}

function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY_STORE) ?? "");
  const [needKey, setNeedKey] = useState(false);
  const [graph, setGraph] = useState<string>("table_qa");
  const [pause, setPause] = useState<Review>("off");
  const [threadId, setThreadId] = useState<string | null>(null);
  const [threads, setThreads] = useState<Thread[]>([]);
  const [uploads, setUploads] = useState<{ file: string; source: Source }[]>([]);
  const [sent, setSent] = useState<Set<string>>(new Set());
  const [progress, setProgress] = useState<{ n: number; line: string }[]>([]);
  const [question, setQuestion] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [uploading, setUploading] = useState(false);

  const headers = useMemo((): Record<string, string> => (key ? { "x-api-key": key } : {}), [key]);
  const client = useMemo(
    () => new Client({ apiUrl: window.location.origin, defaultHeaders: headers }),
    [headers],
  );
  const stream = useStream<PageState>({
    client,
    assistantId: graph,
    threadId,
    onThreadId: setThreadId,
    fetchStateHistory: false,
    onCustomEvent: (data, { mutate }) => {
      if (isUIMessage(data) || isRemoveUIMessage(data)) {
        mutate((prev) => ({ ...prev, ui: uiMessageReducer(prev.ui ?? [], data) }));
        return;
      }
      const event = ProgressSchema.safeParse(data);
      const line = event.success ? event.data.line : null;
      if (line) setProgress((lines) => [...lines, { n: lines.length, line }]);
    },
    onError: (error) => setProblem(errorText(error)),
  });

  const refuse = useCallback(async (response: Response) => {
    if (response.status === 401) setNeedKey(true);
    setProblem(await problemOf(response));
  }, []);

  const loadThreads = useCallback(async () => {
    const response = await fetch("/threads/search", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ limit: 30, sort_by: "updated_at", sort_order: "desc" }),
    });
    if (!response.ok) return refuse(response);
    const listed = z.array(ThreadSchema).safeParse(await response.json());
    if (listed.success) setThreads(listed.data);
  }, [headers, refuse]);

  useEffect(() => {
    void loadThreads();
  }, [loadThreads]);

  const imageSource = useCallback(
    async (src: string) => {
      if (!key) return src;
      const response = await fetch(src, { headers });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return URL.createObjectURL(await response.blob());
    },
    [key, headers],
  );

  async function upload(files: FileList | File[]) {
    setProblem(null);
    setUploading(true);
    try {
      for (const file of Array.from(files)) {
        const response = await fetch(`/tables?name=${encodeURIComponent(file.name)}`, {
          method: "POST",
          headers,
          body: file,
        });
        if (!response.ok) {
          await refuse(response);
          return;
        }
        const reply = UploadReplySchema.parse(await response.json());
        setUploads((list) => [...list, { file: file.name, source: reply.source }]);
      }
    } finally {
      setUploading(false);
    }
  }

  async function ask(e: FormEvent) {
    e.preventDefault();
    const asked = question.trim();
    if (!asked) return;
    setProblem(null);
    const sources = uploads.map((u) => u.source);
    const fresh = sources.filter((s) => !sent.has(s.upload));
    if (!threadId && sources.length === 0) {
      setProblem("Pick or drop a table first.");
      return;
    }
    setSent(new Set([...sent, ...fresh.map((s) => s.upload)]));
    setProgress([]);
    setQuestion("");
    const input = fresh.length > 0 ? { question: asked, sources } : { question: asked };
    // A new thread is made by the hook, titled with its first question.
    const made = threadId ? {} : { metadata: { title: asked, graph_id: graph } };
    await stream.submit(input, { streamSubgraphs: true, context: { review: pause }, ...made });
    void loadThreads();
  }

  function open(thread: Thread) {
    setGraph(thread.metadata.graph_id ?? "table_qa");
    setThreadId(thread.thread_id);
    setUploads([]);
    setSent(new Set());
    setProgress([]);
    setProblem(null);
  }

  function startOver() {
    setThreadId(null);
    setUploads([]);
    setSent(new Set());
    setProgress([]);
    setProblem(null);
  }

  function dropped(e: DragEvent<HTMLElement>) {
    e.preventDefault();
    if (e.dataTransfer.files.length > 0) void upload(e.dataTransfer.files);
  }

  const review = ReviewSchema.safeParse(stream.interrupt?.value);
  const messages = stream.values?.ui ?? [];

  return (
    <ImageSource.Provider value={imageSource}>
      <div className="tm-page">
        <nav className="tm-threads" aria-label="threads">
          <button type="button" onClick={startOver}>
            New thread
          </button>
          <ul>
            {threads.map((t) => (
              <li key={t.thread_id}>
                <button
                  type="button"
                  aria-current={t.thread_id === threadId ? "true" : undefined}
                  onClick={() => open(t)}
                >
                  {t.metadata.title ?? t.thread_id}
                  <span className="tm-graph">{t.metadata.graph_id ?? ""}</span>
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <main className="tm-main">
          <header className="tm-header">
            <h1>tableminds</h1>
            <label>
              Graph{" "}
              <select
                value={graph}
                disabled={threadId !== null}
                onChange={(e) => setGraph(e.target.value)}
              >
                {GRAPHS.map((g) => (
                  <option key={g} value={g}>
                    {g}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Review before{" "}
              <select value={pause} onChange={(e) => setPause(e.target.value as Review)}>
                {Object.entries(REVIEWS).map(([value, words]) => (
                  <option key={value} value={value}>
                    {words}
                  </option>
                ))}
              </select>
            </label>
          </header>
          {needKey ? (
            <KeyForm
              onKey={(k) => {
                sessionStorage.setItem(KEY_STORE, k);
                setKey(k);
                setNeedKey(false);
                setProblem(null);
              }}
            />
          ) : null}
          {threadId === null ? (
            // biome-ignore lint/a11y/noStaticElementInteractions: the drop target; the file input inside it is the keyboard's way
            <div className="tm-drop" onDragOver={(e) => e.preventDefault()} onDrop={dropped}>
              <label>
                Drop a table here, or pick one (CSV, TSV, JSON, Excel, Parquet){" "}
                <input
                  type="file"
                  multiple
                  accept=".csv,.tsv,.txt,.json,.jsonl,.xlsx,.xlsm,.xls,.parquet"
                  onChange={(e) => e.target.files && void upload(e.target.files)}
                />
              </label>
              {uploading ? <p>Uploading…</p> : null}
              {uploads.length > 0 ? (
                <ul className="tm-sources" aria-label="tables">
                  {uploads.map((u) => (
                    <li key={u.source.upload}>{u.file}</li>
                  ))}
                </ul>
              ) : null}
            </div>
          ) : null}
          <form className="tm-ask" onSubmit={ask}>
            <label htmlFor="tm-question">
              {threadId ? "Ask a follow-up" : "Ask about the table"}
            </label>
            <input
              id="tm-question"
              value={question}
              onChange={(e) => setQuestion(e.target.value)}
              placeholder="How many gold medals did these nations win in total?"
              autoComplete="off"
            />
            <button type="submit" disabled={stream.isLoading || uploading}>
              Ask
            </button>
            {stream.isLoading ? (
              <button type="button" onClick={() => void stream.stop()}>
                Stop
              </button>
            ) : null}
          </form>
          {problem ? (
            <p className="tm-error" role="alert">
              {problem}
            </p>
          ) : null}
          {progress.length > 0 ? (
            <ol className="tm-progress" aria-label="progress" aria-live="polite">
              {progress.map(({ n, line }) => (
                <li key={n}>{line}</li>
              ))}
            </ol>
          ) : null}
          {review.success ? (
            <ReviewPanel
              key={JSON.stringify(review.data)}
              review={review.data}
              onDecide={(decision) =>
                void stream.submit(undefined, {
                  command: { resume: decision },
                  context: { review: pause },
                  threadId: threadId ?? undefined,
                  streamSubgraphs: true,
                })
              }
            />
          ) : null}
          <div className="tm-views">
            {messages.map((m) => {
              const View = components[m.name as keyof typeof components];
              return View ? <View key={m.id} {...m.props} /> : null;
            })}
          </div>
        </main>
      </div>
    </ImageSource.Provider>
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
