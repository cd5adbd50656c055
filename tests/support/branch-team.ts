import { seedOf } from "../../blackboard/branches.js";
import { lastMessage } from "./scripts.js";
import type { StubReply, StubRequest } from "./stub-openai.js";

/** Every branch id a small search can make, by its seed: `p3`, `p3.c2`, `p3.c2.a1`, ... */
const IDS_BY_SEED = new Map<number, string>();
for (let p = 1; p <= 8; p++) {
  IDS_BY_SEED.set(seedOf(`p${p}`), `p${p}`);
  for (let c = 1; c <= 8; c++) {
    IDS_BY_SEED.set(seedOf(`p${p}.c${c}`), `p${p}.c${c}`);
    for (let a = 1; a <= 8; a++) IDS_BY_SEED.set(seedOf(`p${p}.c${c}.a${a}`), `p${p}.c${c}.a${a}`);
  }
}

/** The branch a request comes from, by the seed it carries (the run's own seed is 0). */
export function branchOf(req: StubRequest): string {
  const seed = req.body.seed;
  const id = typeof seed === "number" ? IDS_BY_SEED.get(seed) : undefined;
  if (!id) throw new Error(`no branch has seed ${String(seed)}`);
  return id;
}

/**
 * A team whose plan number p (p1, p2, ...) makes its code print `values[p - 1]`, computed over
 * the medals table, or raise when that value is null. The planner writes the plan's number into the plan,
 * the coder reads it from its prompt, and the answerer answers the last line printed.
 */
export function branchTeam(values: (number | null)[]) {
  return (req: StubRequest): StubReply => {
    const prompt = lastMessage(req);
    if (req.role === "planner") {
      const plan = Number(/^p(\d+)/.exec(branchOf(req))?.[1]);
      return `<plan>\n1. Use variant ${plan} of the sum.\n</plan>`;
    }
    if (req.role === "coder") {
      const variant = Number(/variant (\d+)/.exec(prompt)?.[1]);
      const value = values[variant - 1];
      if (value === null || value === undefined) {
        return '```python\nraise ValueError("this variant never works")\n```';
      }
      // Computed from the table (the gold column sums to 203), so the check finds it derived.
      return `\`\`\`python\ntotal = df["gold"].sum() - 203 + ${value}\nprint(total)\n\`\`\``;
    }
    if (req.role === "answerer") {
      const printed = /Output:\n([\s\S]*?)(?:\n\n|$)/.exec(prompt)?.[1]?.trim();
      return `Final Answer: ${printed || "cannot be computed"}`;
    }
    return { status: 500, content: `no reply scripted for role ${req.role}` };
  };
}
