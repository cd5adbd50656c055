/**
 * The queue benchmark's job processor: the one `tableminds consume` runs (cli/consume-jobs.ts),
 * with the graph of three model calls (bench/three-call-graph.ts) in place of the graphs of
 * langgraph.json, so that a question's time is the model's, not its tables'.
 */
import { jobProcessor } from "../cli/consume-jobs.js";
import { threeCallGraph } from "./three-call-graph.js";

export default jobProcessor(async () => ({ graph: threeCallGraph, limits: {} }));
