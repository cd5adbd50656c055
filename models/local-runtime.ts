import { open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  getLlama,
  type Llama,
  LlamaChat,
  type LlamaContext,
  type LlamaContextSequence,
  LlamaLogLevel,
  type LlamaModel,
} from "node-llama-cpp";
import { z } from "zod";
import { WorkCache } from "../storage/bounded-cache.js";

/** A GGUF file that is missing, not GGUF, or that llama.cpp cannot load; names the file. */
export class LocalModelError extends Error {
  readonly file: string;
  constructor(file: string, problem: string, options?: ErrorOptions) {
    super(`local model ${file}: ${problem}`, options);
    this.name = "LocalModelError";
    this.file = file;
  }
}

/** One loaded model with its one context; calls take turns on its sequence. */
export interface LocalRuntime {
  file: string;
  model: LlamaModel;
  contextSize: number;
  loadMs: number;
  /** Runs `task` when no other call is generating with this model. */
  exclusive<T>(task: (chat: LlamaChat, sequence: LlamaContextSequence) => Promise<T>): Promise<T>;
}

const REDOWNLOAD =
  "delete it and run `bash scripts/setup-model.sh` again (or give another --model local:<file.gguf>)";

/** The last lines llama.cpp logged, to say why a load failed. */
const recentLog: string[] = [];
let llama: Promise<Llama> | undefined;

function engine(): Promise<Llama> {
  llama ??= getLlama({
    // The prebuilt CPU binary from @node-llama-cpp/*: never compile, never probe GPUs.
    build: "never",
    gpu: false,
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => {
      recentLog.push(message.trim());
      if (recentLog.length > 8) recentLog.shift();
      if (level === LlamaLogLevel.fatal) process.stderr.write(`[llama.cpp] ${message}\n`);
    },
  }).catch((error: unknown) => {
    llama = undefined;
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `node-llama-cpp has no usable prebuilt binary for ${process.platform}-${process.arch}: ${why}`,
      { cause: error },
    );
  });
  return llama;
}

/** Fails fast, naming the file, when it is absent or does not start with the GGUF magic. */
export async function checkGgufFile(file: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, "r");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new LocalModelError(
      file,
      code === "ENOENT" ? "no such file" : `cannot be read (${code})`,
      {
        cause: error,
      },
    );
  }
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    if (bytesRead < 4 || head.toString("latin1") !== "GGUF") {
      throw new LocalModelError(
        file,
        `not a GGUF model file (it begins with ${JSON.stringify(head.subarray(0, bytesRead).toString("latin1"))}); ${REDOWNLOAD}`,
      );
    }
  } finally {
    await handle.close();
  }
}

const runtimes = new WorkCache<LocalRuntime>(Number.POSITIVE_INFINITY);

const ThreadsEnv = z.object({
  TABLEMINDS_LOCAL_THREADS: z.preprocess(
    (v) => (v === "" ? undefined : v),
    z.coerce.number().int().min(1).max(64).optional(),
  ),
});

/**
 * Threads for generation: TABLEMINDS_LOCAL_THREADS, else the cores not already busy (by the
 * 1-minute load), 1 to 4. llama.cpp's threads wait for each other at every step, so on cores
 * other processes keep busy, fewer threads are faster than more.
 */
export function localThreads(
  env: Readonly<Record<string, string | undefined>> = process.env,
  cores = os.availableParallelism(),
  load = os.loadavg()[0] ?? 0,
): number {
  const wanted = ThreadsEnv.parse(env).TABLEMINDS_LOCAL_THREADS;
  if (wanted !== undefined) return wanted;
  return Math.max(1, Math.min(4, cores - Math.round(load)));
}

function threads(): number {
  return localThreads();
}

/**
 * The model at `file`, loaded once per process with a context of at most `contextSize` tokens
 * (less when the model was trained on less). A failed load is not cached.
 */
export function loadLocalModel(file: string, contextSize: number): Promise<LocalRuntime> {
  const key = `${path.resolve(file)}\0${contextSize}`;
  return runtimes.obtain(key, () => load(path.resolve(file), contextSize));
}

async function load(file: string, wanted: number): Promise<LocalRuntime> {
  await checkGgufFile(file);
  const started = performance.now();
  const llamaEngine = await engine();
  recentLog.length = 0;
  let model: LlamaModel;
  try {
    model = await llamaEngine.loadModel({ modelPath: file });
  } catch (error) {
    const said = [...recentLog]
      .reverse()
      .find((line) => /error|corrupt|invalid|failed/i.test(line));
    const why = said ?? (error instanceof Error ? error.message : String(error));
    throw new LocalModelError(
      file,
      `llama.cpp cannot load it, it is truncated or corrupt (${why}); ${REDOWNLOAD}`,
      {
        cause: error,
      },
    );
  }
  const contextSize = Math.min(wanted, model.trainContextSize);
  let context: LlamaContext;
  try {
    context = await model.createContext({ contextSize, threads: threads() });
  } catch (error) {
    await model.dispose();
    throw new LocalModelError(
      file,
      `no context of ${contextSize} tokens could be made (${String(error)})`,
      {
        cause: error,
      },
    );
  }
  const sequence = context.getSequence();
  const chat = new LlamaChat({ contextSequence: sequence });
  let queue: Promise<unknown> = Promise.resolve();
  return {
    file,
    model,
    contextSize,
    loadMs: Math.round(performance.now() - started),
    exclusive<T>(task: (c: LlamaChat, s: LlamaContextSequence) => Promise<T>): Promise<T> {
      const run = queue.then(() => task(chat, sequence));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
