import { randomUUID } from "node:crypto";
import { type BaseStore, Command, MemorySaver } from "@langchain/langgraph";
import type { TableQAStateValue } from "../blackboard/state.js";
import { openPersistence } from "../graphs/persistence.js";
import {
  type GraphSnapshot,
  loadGraph,
  type RunnableGraph,
  runLimits,
} from "../graphs/registry.js";
import { reportSlowModelCalls } from "../models/activity.js";
import { insideBranch, LABEL_WIDTH } from "../nodes/progress.js";
import { type ReviewDecision, type ReviewRequest, ReviewRequestSchema } from "../nodes/reviewer.js";
import { configurationOf } from "../nodes/runtime.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import type { Configuration } from "../settings/configuration.js";
import { adoptOperatorFields, setOperatorSettings } from "../settings/operator.js";
import { localBudget, outOfBudget } from "./budget.js";
import { askOnTerminal, describeEvent } from "./events.js";
import { jsonResult, renderResult } from "./report.js";
import { terminalJson, terminalText } from "./terminal-text.js";

export interface AskOptions {
  tables: string[];
  /** The character encoding of every table file (else detected). */
  encoding?: string;
  question: string;
  graph: string;
  json: boolean;
  quiet: boolean;
  context: Partial<Configuration>;
  /**
   * Save every step under this id: asking the same question again resumes an interrupted run
   * (or prints the finished answer), a new question continues the thread's conversation.
   */
  thread?: string;
  /** Long-term memory for recall/archive: a given store, else `$TABLEMINDS_HOME/memory.sqlite`. */
  store?: BaseStore;
  /** False: no memory store at all. */
  memory?: boolean;
  /** Step limit of the run. */
  recursionLimit?: number;
  /** The command's arguments, for the resume hint (default: this process's). */
  argv?: readonly string[];
  /**
   * Answers a review pause (`review` on); default: a prompt on the terminal. Without one and
   * with stdin not a terminal, a run with review on is refused before it starts.
   */
  decide?: (request: ReviewRequest) => Promise<ReviewDecision>;
}

/** Raised when review is on but nobody can answer its pauses. */
export class ReviewNeedsTerminalError extends Error {
  constructor() {
    super(
      "--review pauses for approve, edit or reject on a terminal, and stdin is not one; " +
        "run it in a terminal, or review through Studio or the SDK (Command({ resume }))",
    );
    this.name = "ReviewNeedsTerminalError";
  }
}

/** The first review pause among a stream's updates (a subgraph's included), if any. */
function pauseIn(payload: unknown): ReviewRequest | undefined {
  if (!isRecord(payload) || !Array.isArray(payload.__interrupt__)) return undefined;
  const first: unknown = payload.__interrupt__[0];
  const parsed = ReviewRequestSchema.safeParse(isRecord(first) ? first.value : undefined);
  return parsed.success ? parsed.data : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Raised when `--thread` names a thread whose last question has not finished its run. */
export class ThreadUnfinishedError extends Error {
  constructor(thread: string, asked: string) {
    super(
      `thread "${thread}" has not finished its run for ${JSON.stringify(asked)}; ` +
        "ask that question again with this --thread to resume it, then ask the follow-up " +
        "(or use a new --thread id)",
    );
    this.name = "ThreadUnfinishedError";
  }
}

type Start =
  | { kind: "fresh" }
  | { kind: "follow-up"; earlier: number }
  | { kind: "resume"; next: readonly string[] }
  | { kind: "done" };

/**
 * The nodes a stopped run goes on with, inside the subgraph it stopped in, if any. A step whose
 * writes landed before the checkpoint after it did is one of the snapshot's tasks but not in
 * `next`; the run goes on from it (its writes replayed, not run again).
 */
export function pendingNodes(snapshot: GraphSnapshot): readonly string[] {
  const tasks = snapshot.tasks ?? [];
  const inner = tasks.flatMap((task) => (isSnapshot(task.state) ? pendingNodes(task.state) : []));
  if (inner.length > 0) return inner;
  return tasks.length > 0 ? tasks.map((task) => task.name) : snapshot.next;
}

const isSnapshot = (value: unknown): value is GraphSnapshot =>
  isRecord(value) && Array.isArray(value.next);

/**
 * Whether a threaded run starts, continues the thread's conversation with a new question,
 * resumes where it stopped, or has already finished.
 */
async function threadStart(graph: RunnableGraph, thread: string, question: string): Promise<Start> {
  const snapshot = await graph.getState(
    { configurable: { thread_id: thread } },
    { subgraphs: true },
  );
  const values = isRecord(snapshot.values) ? snapshot.values : {};
  if (typeof values.question !== "string") return { kind: "fresh" };
  const unfinished = snapshot.next.length > 0;
  if (values.question !== question) {
    if (unfinished) throw new ThreadUnfinishedError(thread, values.question);
    const archived = Array.isArray(values.turns) ? values.turns.length : 0;
    return { kind: "follow-up", earlier: archived + (values.answer ? 1 : 0) };
  }
  if (unfinished) return { kind: "resume", next: pendingNodes(snapshot) };
  return { kind: "done" };
}

/** The run passed its deadline (`runTimeoutMs`). */
export class RunDeadlineError extends Error {
  constructor(ms: number, resume?: string) {
    super(
      `the run did not finish within its deadline of ${duration(ms)} (runTimeoutMs; 0 for none)` +
        (resume ? `; resume with: ${resume}` : ""),
    );
    this.name = "RunDeadlineError";
  }
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000 || ms % 60_000 !== 0) return `${Number((ms / 1000).toFixed(1))} s`;
  return `${ms / 60_000} min`;
}

/** An argument as a POSIX shell reads it back. */
function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** The command line that runs this again (with --thread, resumes it). */
function commandLine(argv: readonly string[]): string {
  return ["tableminds", ...argv].map(shellWord).join(" ");
}

interface MessageChunkLike {
  text?: unknown;
}

/** The text of a `messages` stream event, when it comes from the answerer. */
function answererToken(payload: unknown): string {
  if (!Array.isArray(payload)) return "";
  const [message, metadata] = payload as [MessageChunkLike, Record<string, unknown> | undefined];
  if (metadata?.langgraph_node !== "answerer") return "";
  return typeof message?.text === "string" ? message.text : "";
}

/**
 * Runs one question through a graph, progress to stderr, the result to stdout. A model call
 * that waits more than a few seconds is told on stderr; with `streaming` and stderr a
 * terminal, the answerer's reply appears there token by token. The run stops at its deadline
 * (`runTimeoutMs`); Ctrl-C stops it with exit code 130 and, with a thread, says how to resume.
 * Returns the final state, or undefined when interrupted.
 */
export async function ask(options: AskOptions): Promise<TableQAStateValue | undefined> {
  // The operator's fields among the caller's settings hold for the process, not for the run.
  const context = adoptOperatorFields(options.context);
  const config = configurationOf({ context });
  const reviewing = config.review !== "off";
  const decide = options.decide ?? (process.stdin.isTTY ? askOnTerminal : undefined);
  if (reviewing && !decide) throw new ReviewNeedsTerminalError();
  // Checkpoints and memory in SQLite files, or in PostgreSQL with TABLEMINDS_DATABASE_URL.
  const persistence = await openPersistence({
    checkpoints: !!options.thread,
    memory: !options.store && options.memory !== false,
  });
  const checkpointer = persistence.checkpointer;
  // A review pause needs a checkpointer to resume from: a thread's, else one in memory.
  const saver = checkpointer ?? (reviewing ? new MemorySaver() : undefined);
  const runId = options.thread ?? (reviewing ? randomUUID() : undefined);
  const ownStore = persistence.store;
  const thread = options.thread;
  const resume = thread ? commandLine(options.argv ?? process.argv.slice(2)) : undefined;
  let tokenLineOpen = false;
  const endTokenLine = () => {
    if (tokenLineOpen) process.stderr.write("\n");
    tokenLineOpen = false;
  };
  const say = (line: string) => {
    if (options.quiet) return;
    endTokenLine();
    process.stderr.write(`${terminalText(line)}\n`);
  };
  const streamTokens = config.streaming && !options.quiet && process.stderr.isTTY === true;
  const interrupt = new AbortController();
  const onSigint = () => {
    // A second Ctrl-C does not wait for the run to wind down.
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort(new Error("interrupted"));
  };
  const deadline = config.runTimeoutMs > 0 ? AbortSignal.timeout(config.runTimeoutMs) : undefined;
  const budget = localBudget(config);
  const signals = [interrupt.signal, deadline, budget].filter((s) => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : interrupt.signal;
  const stopNotices = options.quiet
    ? () => {}
    : reportSlowModelCalls({
        labelWidth: LABEL_WIDTH,
        // Not in the middle of a line of streamed tokens.
        write: (line) => {
          if (!tokenLineOpen) say(line);
        },
      });
  process.on("SIGINT", onSigint);
  let state: TableQAStateValue | undefined;
  // The solve subgraph's latest values: where a run stopped by its budget has got to.
  let inner: Partial<TableQAStateValue> = {};
  let interrupted = false;
  try {
    // The local sandbox starts now, while the graph loads and the planner's model call is in
    // flight, not when the executor first needs it; a failed start is tried again there.
    if (config.sandbox === "local") getSandbox("local").catch(() => {});
    // The files named on the command line are the user's choice, wherever they are.
    setOperatorSettings({ tableFiles: options.tables });
    const graph = await loadGraph(options.graph, {
      persistence: { checkpointer: saver, store: options.store ?? ownStore },
    });
    const limits = await runLimits(options.graph, config);
    const start = thread
      ? await threadStart(graph, thread, options.question)
      : ({ kind: "fresh" } as Start);
    if (start.kind === "resume") say(`resume thread ${thread} at ${start.next.join(", ")}`);
    if (start.kind === "done") say(`thread ${thread} has finished; its answer:`);
    if (start.kind === "follow-up") {
      const earlier = `${start.earlier} earlier question${start.earlier === 1 ? "" : "s"}`;
      say(`thread ${thread}: a follow-up to ${earlier}`);
    }
    const input =
      start.kind === "fresh" || start.kind === "follow-up"
        ? {
            question: options.question,
            sources: options.tables.map((path) => ({ path, encoding: options.encoding })),
          }
        : null;
    let next: Record<string, unknown> | Command | null = input;
    while (start.kind !== "done") {
      let pause: ReviewRequest | undefined;
      const modes = ["updates", "values", "custom"];
      const stream = await graph.stream(next as Record<string, unknown> | null, {
        streamMode: streamTokens ? [...modes, "messages"] : modes,
        // Progress of the nodes inside subgraphs too (table_qa's solve).
        subgraphs: true,
        context,
        recursionLimit: options.recursionLimit ?? limits.recursionLimit,
        maxConcurrency: limits.maxConcurrency,
        signal,
        ...(runId ? { configurable: { thread_id: runId } } : {}),
      });
      for await (const chunk of stream) {
        if (!Array.isArray(chunk)) continue;
        const [namespace, mode, payload] = chunk as [string[], string, unknown];
        if (mode === "messages") {
          const token = answererToken(payload);
          if (!token) continue;
          if (!tokenLineOpen) process.stderr.write(`${"answerer".padEnd(LABEL_WIDTH)} `);
          tokenLineOpen = true;
          process.stderr.write(terminalText(token));
        }
        if (mode === "values" && namespace.length === 0) state = payload as TableQAStateValue;
        if (mode === "values" && namespace.length === 1 && isRecord(payload)) {
          inner = payload as Partial<TableQAStateValue>;
        }
        if (mode === "custom" && !insideBranch(namespace)) {
          const line = describeEvent(payload, { live: true });
          if (line) say(line);
        }
        pause ??= mode === "updates" ? pauseIn(payload) : undefined;
      }
      if (!pause || !decide) break;
      endTokenLine();
      next = new Command({ resume: await decide(pause) });
    }
    if (thread && !state) {
      const snapshot = await graph.getState({ configurable: { thread_id: thread } });
      state = snapshot.values as TableQAStateValue;
    }
  } catch (error) {
    if (interrupt.signal.aborted) {
      interrupted = true;
    } else if (budget?.aborted && !deadline?.aborted && state) {
      say(
        `${"budget".padEnd(LABEL_WIDTH)} ${config.localBudgetMs / 1000} s for the local model ran out: the best candidate so far`,
      );
      state = outOfBudget({ ...state, ...inner }, config.localBudgetMs);
    } else if (deadline?.aborted) {
      throw new RunDeadlineError(config.runTimeoutMs, resume);
    } else {
      throw error;
    }
  } finally {
    endTokenLine();
    stopNotices();
    process.removeListener("SIGINT", onSigint);
    await closeSandboxes();
    await persistence.close();
  }
  if (interrupted) {
    process.stderr.write(
      resume
        ? `tableminds: interrupted; resume with: ${resume}\n`
        : "tableminds: interrupted (a run given --thread <id> can be resumed)\n",
    );
    process.exitCode = 130;
    return undefined;
  }
  if (!state) throw new Error("the graph produced no state");
  if (options.json) {
    process.stdout.write(`${terminalJson(JSON.stringify(jsonResult(state), null, 2))}\n`);
  } else {
    process.stdout.write(`${terminalText(await renderResult(state))}\n`);
  }
  return state;
}
