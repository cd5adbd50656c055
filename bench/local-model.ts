/**
 * The embedded local model's speed on this machine (not a test): load time, then prompt
 * processing and generation in tokens per second, each the median of a few runs.
 *
 *   npx tsx bench/local-model.ts [local:<path-or-name>=local] [runs=3]
 */
import { ChatLocalModel } from "../models/local-chat.js";
import { resolveLocalSpec } from "../models/local-spec.js";

const spec = process.argv[2] ?? "local";
const RUNS = Number(process.argv[3] ?? 3);
const GENERATED = 128;

const ref = resolveLocalSpec(spec, process.env);
const chat = new ChatLocalModel({ modelPath: ref.path, model: spec, contextSize: ref.contextSize });

const started = performance.now();
const runtime = await chat.load();
const loadMs = performance.now() - started;

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

// Prompt processing: a table of about 1,000 tokens, one token of reply.
const rows = Array.from({ length: 120 }, (_, i) => `${i},nation ${i},${(i * 7) % 40}`).join("\n");
const longPrompt = [{ role: "user", content: `Table:\nid,nation,gold\n${rows}\n\nHow many rows?` }];
const prompt: number[] = [];
let promptTokens = 0;
for (let i = 0; i < RUNS; i++) {
  const reply = await chat.invoke(longPrompt, { maxTokens: 1 });
  promptTokens = reply.usage_metadata?.input_tokens ?? 0;
  prompt.push(promptTokens / (Number(reply.response_metadata.generation_ms) / 1000));
}

// Generation: a short prompt, GENERATED tokens with no stop but the length.
const shortPrompt = [{ role: "user", content: "Write a long story about a table of numbers." }];
const generation: number[] = [];
let generated = 0;
for (let i = 0; i < RUNS; i++) {
  const t = performance.now();
  const reply = await chat.invoke(shortPrompt, { maxTokens: GENERATED });
  generated = reply.usage_metadata?.output_tokens ?? 0;
  generation.push(generated / ((performance.now() - t) / 1000));
}

console.log(`model            ${ref.path}`);
console.log(`context          ${runtime.contextSize} tokens`);
console.log(`load             ${Math.round(loadMs)} ms`);
console.log(
  `prompt           ${median(prompt).toFixed(0)} tokens/s (${promptTokens}-token prompt, median of ${RUNS})`,
);
console.log(
  `generation       ${median(generation).toFixed(1)} tokens/s (${generated} tokens, prompt included, median of ${RUNS})`,
);
