import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<string>();

/** Runs `work` as question `id`'s: warnings raised within it can say which question they are of. */
export function inQuestion<T>(id: string, work: () => Promise<T>): Promise<T> {
  return scope.run(id, work);
}

/** The id of the question whose work is running, if any. */
export function currentQuestion(): string | undefined {
  return scope.getStore();
}
