import { contextSchemaOf } from "../../settings/configuration.js";

/** What solve reads of the run configuration: its form in Studio, and what a caller may pass it. */
export const context = contextSchemaOf("run");
