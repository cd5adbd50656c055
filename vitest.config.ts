import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    // A guard against hangs, not a speed target: end-to-end tests spawn several CLI processes
    // that each run generated code (and re-run it on perturbed tables) on two shared cores.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tracing stays off in tests: with no reachable endpoint it would block on flush.
    env: { LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false" },
    // Integration and e2e tests start Python workers and servers; two cores here.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
