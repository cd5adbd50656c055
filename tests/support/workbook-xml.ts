/** The spreadsheet XML namespace of a sheet's `<worksheet>`. */
export const MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const RELS = "http://schemas.openxmlformats.org/package/2006/relationships";
const DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** The part that holds the one sheet of a workbook made from `WORKBOOK_SKELETON`. */
export const SHEET_PART = "xl/worksheets/sheet1.xml";

/**
 * The parts of a one-sheet workbook ("Data") but the sheet itself (`SHEET_PART`), as name and
 * XML: what the workbook tests and the bomb benchmark zip around the sheets they make.
 */
export const WORKBOOK_SKELETON: readonly { name: string; xml: string }[] = [
  {
    name: "[Content_Types].xml",
    xml:
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      `<Override PartName="/${SHEET_PART}" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
      "</Types>",
  },
  {
    name: "_rels/.rels",
    xml: `<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  },
  {
    name: "xl/workbook.xml",
    xml: `<workbook xmlns="${MAIN}" xmlns:r="${DOC}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  },
  {
    name: "xl/_rels/workbook.xml.rels",
    xml: `<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
  },
];
