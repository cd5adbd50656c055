import { contextSchemaOf } from "../../settings/configuration.js";

/** What table_qa reads of the run configuration: its form in Studio, and what a caller may pass it. */
export const context = contextSchemaOf("run", "check", "reflection", "memory");
