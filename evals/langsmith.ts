import { createHash } from "node:crypto";
import { Client } from "langsmith";
import { langsmithEndpoint } from "../settings/services.js";
import { forEachBounded } from "./pool.js";
import type { ResultRecord } from "./results-file.js";
import type { EvalExample } from "./types.js";

/** A UUID derived from `parts`, so reruns refer to the same dataset examples and runs. */
export function stableUuid(...parts: string[]): string {
  const h = createHash("sha256").update(parts.join("\u0000")).digest("hex");
  const variant = ((Number.parseInt(h.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface ExperimentOptions {
  datasetName: string;
  experimentName: string;
  graph: string;
  examples: EvalExample[];
  records: ResultRecord[];
  /** The API endpoint, checked first; default LANGSMITH_ENDPOINT, else LangSmith's cloud. */
  apiUrl?: string;
  /** Default: a client of `apiUrl` with LANGSMITH_API_KEY (a given client is not checked). */
  client?: Client;
  /** Requests in flight at once while uploading runs and feedback. */
  concurrency?: number;
}

/**
 * Fails fast when nothing answers at the endpoint: the client retries every request with
 * backoff, which takes about 20 s per request against a closed port.
 */
async function assertReachable(apiUrl: string): Promise<void> {
  try {
    await fetch(`${apiUrl.replace(/\/$/, "")}/info`, { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`LangSmith at ${apiUrl} cannot be reached (${cause ?? reason})`);
  }
}

/**
 * Records an evaluation as a LangSmith experiment: the dataset and its examples (created
 * once, reused after), an experiment session tied to it, one run per answered question with
 * its reference example, and its score as feedback.
 */
export async function recordExperiment(
  options: ExperimentOptions,
): Promise<{ datasetId: string; experimentId: string }> {
  const apiUrl = options.apiUrl ?? (options.client ? undefined : langsmithEndpoint());
  if (apiUrl) await assertReachable(apiUrl);
  const client = options.client ?? new Client({ apiUrl, autoBatchTracing: false });
  const dataset = await client.readDataset({ datasetName: options.datasetName }).catch(() =>
    client.createDataset(options.datasetName, {
      description: `tableminds: ${options.datasetName}`,
    }),
  );
  const known = new Set<string>();
  for await (const example of client.listExamples({ datasetId: dataset.id })) known.add(example.id);
  const missing = options.examples.filter((e) => !known.has(stableUuid(options.datasetName, e.id)));
  if (missing.length > 0) {
    await client.createExamples(
      missing.map((e) => ({
        id: stableUuid(options.datasetName, e.id),
        dataset_id: dataset.id,
        inputs: { question: e.question, id: e.id },
        outputs: { answer: e.gold },
        metadata: { category: e.category, subcategory: e.subcategory },
      })),
    );
  }
  const project = await client.createProject({
    projectName: options.experimentName,
    referenceDatasetId: dataset.id,
    metadata: { graph: options.graph },
  });
  const byId = new Map(options.examples.map((e) => [e.id, e]));
  const answered = options.records.flatMap((record) => {
    const example = byId.get(record.id);
    return example ? [{ record, example }] : [];
  });
  await forEachBounded(answered, options.concurrency ?? 8, async ({ record, example }) => {
    const runId = stableUuid(options.experimentName, record.id);
    const end = Date.parse(record.finishedAt);
    await client.createRun({
      id: runId,
      name: options.graph,
      run_type: "chain",
      inputs: { question: example.question },
      outputs: { answer: record.prediction, output: record.output },
      error: record.error ?? undefined,
      reference_example_id: stableUuid(options.datasetName, record.id),
      project_name: options.experimentName,
      start_time: end - record.latencyMs,
      end_time: end,
      extra: {
        metadata: {
          graph: options.graph,
          dataset: example.dataset,
          question_id: example.id,
          category: example.category,
          subcategory: example.subcategory,
        },
      },
    });
    await client.createFeedback({
      runId,
      key: record.score.metric,
      score: record.score.score,
      sessionId: project.id,
    });
  });
  return { datasetId: dataset.id, experimentId: project.id };
}
