import { uiMessageReducer } from "@langchain/langgraph-sdk/react-ui/server";
import { z } from "zod";

/*
 * LangGraph's generative UI messages, as the SDK's `typedUi` writes them: a component's name and
 * its props, kept in the state under `ui` so that any LangGraph client (Studio, Agent Chat UI,
 * the page of `tableminds ui`) draws them. A message with the id of an earlier one replaces it.
 */

export const UiMessageSchema = z.object({
  type: z.literal("ui"),
  id: z.string(),
  name: z.string(),
  props: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type UiMessage = z.infer<typeof UiMessageSchema>;

const RemoveUiMessageSchema = z.object({ type: z.literal("remove-ui"), id: z.string() });
const UiUpdateSchema = z.union([UiMessageSchema, RemoveUiMessageSchema]);
export const UiUpdatesSchema = z.union([UiUpdateSchema, z.array(UiUpdateSchema)]);

export function reduceUiMessages(
  state: UiMessage[],
  update: z.infer<typeof UiUpdatesSchema>,
): UiMessage[] {
  return uiMessageReducer(state, update) as UiMessage[];
}
