/** The table file types tableminds reads, by extension (a module of its own: cheap to import). */
export const TABLE_FORMATS: readonly string[] = [
  ".csv",
  ".tsv",
  ".json",
  ".xlsx",
  ".xlsm",
  ".xls",
  ".parquet",
];
