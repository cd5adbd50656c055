export { cellAddress, rowAddress } from "./cell-address.js";
export { type CsvRecord, CsvSyntaxError, formatCsv, parseDelimited } from "./csv.js";
export { type Dtype, inferDtype, isMissing, NA_VALUES } from "./dtypes.js";
export { type LoadedTable, loadTable, MAX_TABLE_BYTES, TableLoadError } from "./load.js";
export { tableName, uniqueColumnNames } from "./names.js";
export { profileTable } from "./profile.js";
export { clearTableCache, readTable, type TableData } from "./read.js";
export { renderTable } from "./render.js";
