import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tracing stays off in tests: with no reachable endpoint it would block on flush.
    env: { LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false" },
    // Integration and e2e tests start Python workers and servers; two cores here.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
