/**
 * Files of our own with the structures of public statistics files that broke the reader
 * (issue 34): an election results export with a three-row header and its state and national
 * rows among the constituencies, a budget with group header rows and a column-number row.
 */

/** One constituency's votes: first and second votes, this election and the one before. */
interface Seat {
  nr: number;
  name: string;
  state: number;
  votes: number[][];
}

const PARTIES = ["Alpha-Partei", "Beta-Union", "Gamma-Liste"];

/** Votes by seat: [party][first final, first previous, second final, second previous]. */
const SEATS: Seat[] = [
  {
    nr: 1,
    name: "Nordstadt – Hafen",
    state: 1,
    votes: [
      [4100, 3900, 3800, 3700],
      [2900, 3100, 3000, 3300],
      [800, 700, 1100, 900],
    ],
  },
  {
    nr: 2,
    name: "Nordstadt – Land",
    state: 1,
    votes: [
      [3600, 3500, 3300, 3400],
      [3100, 3000, 2900, 2800],
      [600, 650, 900, 880],
    ],
  },
  {
    nr: 3,
    name: "Seeland Ost",
    state: 1,
    votes: [
      [2800, 2700, 2600, 2500],
      [3500, 3600, 3400, 3500],
      [400, 420, 700, 690],
    ],
  },
  {
    nr: 4,
    name: "Bergkreis",
    state: 2,
    votes: [
      [5100, 5000, 4900, 4800],
      [2200, 2300, 2100, 2250],
      [1200, 1100, 1500, 1300],
    ],
  },
  {
    nr: 5,
    name: "Talstadt",
    state: 2,
    votes: [
      [3300, 3400, 3200, 3350],
      [4100, 4000, 3900, 3950],
      [900, 950, 1000, 1020],
    ],
  },
];

const STATES = [
  { nr: 1, name: "Küstenland", seats: [1, 2, 3] },
  { nr: 2, name: "Bergland", seats: [4, 5] },
];

function add(rows: number[][][]): number[][] {
  return PARTIES.map((_, p) =>
    [0, 1, 2, 3].map((k) => rows.reduce((s, v) => s + (v[p]?.[k] ?? 0), 0)),
  );
}

/**
 * The election file: semicolon separated, title lines, a header of three rows (party names
 * over "first votes / second votes" over "final / previous"), a "belongs to" column, each
 * state's row after its seats and the national row last. As in the real file, states and seats
 * are numbered apart, so state 1 and seat 1 share a number. Answers: second votes (final) of
 * Beta-Union nationwide.
 */
export function electionCsv(): { text: string; betaSecondNational: number; seats: number } {
  const lines = [
    "Wahl zum Landtag: endgültiges Ergebnis;;;",
    "Herausgeber: Die Wahlleitung;;;",
    "",
  ];
  const top = ["Nr", "Gebiet", "gehört zu"];
  const middle = ["", "", ""];
  const bottom = ["", "", ""];
  for (const party of PARTIES) {
    top.push(party, "", "", "");
    middle.push("Erststimmen", "", "Zweitstimmen", "");
    bottom.push("Endgültig", "Vorperiode", "Endgültig", "Vorperiode");
  }
  lines.push(top.join(";"), middle.join(";"), bottom.join(";"));
  const row = (nr: number, name: string, parent: string, votes: number[][]) =>
    [String(nr), name, parent, ...votes.flat().map(String)].join(";");
  const stateVotes: number[][][] = [];
  for (const state of STATES) {
    const seats = SEATS.filter((s) => state.seats.includes(s.nr));
    for (const seat of seats) lines.push(row(seat.nr, seat.name, String(state.nr), seat.votes));
    const votes = add(seats.map((s) => s.votes));
    stateVotes.push(votes);
    lines.push(row(state.nr, state.name, "99", votes));
  }
  const national = add(stateVotes);
  lines.push(row(99, "Bundesgebiet", "", national));
  return {
    text: `${lines.join("\n")}\n`,
    betaSecondNational: national[1]?.[2] ?? 0,
    seats: SEATS.length,
  };
}

/**
 * Structural data by constituency: each state's block of rows ends in a row for the state
 * whose counts add up the block (decimal commas) and whose rates lie among the block's; the
 * state rows' name is a phrase no rule knows ("Land gesamthaft").
 */
export function structuralCsv(): { text: string; population: number; rows: number } {
  const lines = [
    "Land;Nr;Name;Gemeinden (Anzahl);Bevölkerung (in 1000);Ausländer (%);Dichte (je km²)",
  ];
  const states = [
    {
      name: "Küstenland",
      code: 901,
      seats: [
        [12, 250.4, 5.5, 120.3],
        [30, 198.7, 7.1, 98.6],
        [8, 301.2, 12.4, 1450.2],
      ],
    },
    {
      name: "Bergland",
      code: 902,
      seats: [
        [41, 222.9, 4.2, 80.4],
        [17, 275.1, 9.8, 310.7],
        [22, 240.3, 6.6, 150.1],
      ],
    },
  ];
  let nr = 1;
  let population = 0;
  const comma = (n: number) => n.toFixed(1).replace(".", ",");
  for (const state of states) {
    for (const [towns, people, share, density] of state.seats as number[][]) {
      lines.push(
        [
          state.name,
          nr,
          `Kreis ${nr}`,
          towns,
          comma(people ?? 0),
          comma(share ?? 0),
          comma(density ?? 0),
        ].join(";"),
      );
      population += people ?? 0;
      nr++;
    }
    const sum = (k: number) => state.seats.reduce((s, seat) => s + (seat[k] ?? 0), 0);
    lines.push(
      [
        state.name,
        state.code,
        "Land gesamthaft",
        sum(0),
        comma(sum(1)),
        comma(7.3),
        comma(190.2),
      ].join(";"),
    );
  }
  return { text: `${lines.join("\n")}\n`, population: Math.round(population * 10) / 10, rows: 6 };
}

/**
 * A statistics office's workbook of many sheets: a contents sheet naming the others, a notes
 * sheet of long paragraphs, and nine data sheets, each with four title lines, a region label
 * written only on the first row of its block, a block for the whole country adding up the
 * regions, and long notes under the data.
 */
export function manySheetRows(): {
  sheets: { name: string; rows: (string | number | null)[][] }[];
  regions: string[];
} {
  const regions = ["North East", "North West", "London", "South West"];
  const kinds = ["Exports", "Imports", "Balance"];
  const topics = [
    "Food",
    "Fuel",
    "Machinery",
    "Chemicals",
    "Textiles",
    "Metals",
    "Vehicles",
    "Timber",
    "Paper",
  ];
  const note = (i: number) =>
    `Note ${i}: figures are provisional and may be revised in later releases when late returns from businesses are received and checked; totals may not add because of rounding.`;
  const data = topics.map((topic, t) => {
    const rows: (string | number | null)[][] = [
      [`Table ${t + 1}: Trade in ${topic.toLowerCase()} by region, 2024`],
      ["Pounds million, current prices"],
      ["Source: Regional trade statistics"],
      ["Released 1 March 2025"],
      [],
      ["Region", "Flow", "Q1", "Q2", "Q3", "Q4"],
    ];
    const totals = kinds.map(() => [0, 0, 0, 0]);
    for (const [r, region] of regions.entries()) {
      for (const [k, kind] of kinds.entries()) {
        const values = [0, 1, 2, 3].map((q) => 100 + t * 10 + r * 7 + k * 3 + q * 2);
        values.forEach((v, q) => {
          (totals[k] as number[])[q] = ((totals[k] as number[])[q] ?? 0) + v;
        });
        rows.push([k === 0 ? region : null, kind, ...values]);
      }
    }
    for (const [k, kind] of kinds.entries())
      rows.push([k === 0 ? "United Kingdom" : null, kind, ...(totals[k] as number[])]);
    rows.push([], [note(1)], [note(2)], [note(3)]);
    return { name: `Table ${t + 1}`, rows };
  });
  const contents = {
    name: "Contents",
    rows: [
      ["Contents"],
      [],
      ...data.map((d, i) => [d.name, `Trade in ${topics[i]?.toLowerCase()} by region, 2024`]),
    ],
  };
  const notes = { name: "Notes", rows: [["Notes"], ...[1, 2, 3, 4, 5, 6].map((i) => [note(i)])] };
  return { sheets: [contents, notes, ...data], regions };
}
