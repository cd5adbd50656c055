/** An environment variable set to blanks counts as unset: a zod preprocess step for every schema. */
export const blank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
