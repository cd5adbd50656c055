export { createRewardApp, type RewardAppOptions } from "./app.js";
export { bearerOf, readTokenFile, tokenMatches, tokenRefusal } from "./auth.js";
export {
  type PrefixMismatch,
  type RewardRequest,
  RewardRequestSchema,
  type RewardResponse,
  responseOf,
} from "./contract.js";
export { gate, refusalOf } from "./gate.js";
export {
  type LabelTable,
  LabelTableSchema,
  parseLabel,
  type RewardLabel,
  RewardLabelSchema,
} from "./label.js";
export { Limiter } from "./limit.js";
export { BadRequest, type RoleLimiters, type ScoreOptions, scoreRequest } from "./score.js";
export {
  DEFAULT_BODY_LIMIT,
  DEFAULT_CONCURRENCY,
  type RewardServer,
  type RewardServerOptions,
  startRewardServer,
} from "./serve.js";
export {
  csvOfRecords,
  DEFAULT_INLINE_TABLE_BYTES,
  TableRefused,
  TableStore,
  type TableStoreOptions,
} from "./tables.js";
export {
  VERL_REWARD_FUNCTION,
  VERL_REWARD_MANAGER,
  verlModuleSource,
  verlRewardOverrides,
  writeVerlModule,
} from "./verl.js";
