import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  actualAnswerType,
  expectedAnswerType,
  focusQuestion,
  judgeType,
  typeScore,
} from "../../grounding/answer-type.js";
import { answerItems, leadingYesNo, listSegments } from "../../grounding/items.js";

describe("expectedAnswerType", () => {
  it.each([
    // Amounts.
    ["What is the average number of tropical cyclones per season?", "number"],
    ["How many points did Wattstown RFC score in the season?", "number"],
    ["According to the table, how many tries did Llandeilo RFC score in the season?", "number"],
    ["What percentage of votes did the winner get?", "number"],
    [
      "What is the average total points of all couples who have performed more than 10 dances?",
      "number",
    ],
    ["What was the ranking of guangdong in 2008?", "number"],
    ["By how much did the population grow between 2001 and 2011?", "number"],
    ["What were London's imports of machinery and transport equipment in 2024?", "number"],
    ["What were the exports of the North East in Q2?", "number"],
    [
      "In 2001, how many Jamaicans were granted British citizenship through naturalization?",
      "number",
    ],
    [
      "If the GDP per capita of flevoland decreases by 37%, what would be the new GDP per capita?",
      "number",
    ],
    [
      "Based on the historical population data from 1933 to 2001, what is the forecasted population for the 'biggenden' region in the year 2010?",
      "number",
    ],
    [
      "Eurovision Song Contest Points Average is defined as the average number of points received by a country's entry in the contest. What is the average points received by Ireland?",
      "number",
    ],
    [
      "What is the difference between the total number of gold medals and the total number of silver medals?",
      "number",
    ],
    // Yes or no.
    ["Is the total of gold medals greater than 200?", "yesno"],
    ["Did Japan win more gold than China?", "yesno"],
    [
      "Does a higher total capacity (mw) causally influence the completion schedule for the power plants listed in the table?",
      "yesno",
    ],
    ["Has any nation won more than 40 silver medals?", "yesno"],
    // Dates.
    ["In what year was the highest attendance?", "date"],
    ["When did the team win its first title?", "date"],
    ["Which year had the highest crude birth rate (per 1000) in the given time period?", "date"],
    [
      "In which election year did the party achieve the highest percentage of popular vote?",
      "date",
    ],
    ["What is the year in which the athlete won the Stockholm Marathon?", "date"],
    ["In which season did the skier achieve a giant slalom of 7?", "date"],
    // Names.
    ["Which nation ranked 4th in the medal count ?", "entity"],
    ["Who scored the most goals?", "entity"],
    ["Who served longer as governor, Calvin L. Rampton or Mike Leavitt?", "entity"],
    ["Is Japan or China higher in the medal table?", "entity"],
    ["What is the capital of Australia, according to the table?", "entity"],
    [
      "Population Density is calculated as the population of a township divided by its land area in square miles. Which township has the highest population density?",
      "entity",
    ],
    [
      "Calculate the standard deviation of the scores given by each judge to determine which judge's scores have the most variation.",
      "entity",
    ],
    // Lists.
    ["List the nations with more than 10 gold medals.", "list"],
    ["Which top3 factors in the table, such as 'played', 'drawn', impact the points?", "list"],
    ["Which 3 member states have the highest inhabitants per MEP?", "list"],
    ["Which countries have a population of more than 40 million?", "list"],
    ["Which team won the tournament in 2005, and what was the runner-up team that year?", "list"],
    ["What is the mean and standard deviation of the `against` column?", "list"],
    [
      "Which country has the highest GDP per capita, and how is the difference compared to the EC6?",
      "list",
    ],
    ["What are the top 3 nations by total medals?", "list"],
    // Explanations.
    ["How does the number of examinees affect the pass percentage over the years?", "text"],
    [
      "Can you describe the content of the table, explain the significance of each main column?",
      "text",
    ],
    [
      "Can you identify any mountain peaks in the table whose values significantly deviate from the patterns observed in other peaks?",
      "text",
    ],
    [
      "What is the correlation between the number of applications and the offer rate? Provide the correlation coefficient as evidence.",
      "text",
    ],
    [
      "Is there a significant correlation between `elevation (m)` and `prominence (m)`? Please provide the conclusion and cite the correlation coefficient as evidence.",
      "text",
    ],
    [
      "What is the impact of an increase in GDP per capita on a country's population growth rate?",
      "text",
    ],
    [
      "Based on the historical data from 2008 to 2013, forecast the team's performance trend for the next five years.",
      "text",
    ],
  ])("%s -> %s", (question, type) => {
    expect(expectedAnswerType(question)).toBe(type);
  });

  it("reads the sentence that asks, after its lead-in", () => {
    expect(
      focusQuestion(
        "GDP per capita is calculated as the nominal GDP divided by the population. Which country has the highest GDP per capita?",
      ),
    ).toBe("Which country has the highest GDP per capita?");
    expect(focusQuestion("According to the table, which nation won 18 gold medals?")).toBe(
      "which nation won 18 gold medals?",
    );
    expect(focusQuestion("If the viewership rises by 10%, what would it be?")).toBe(
      "what would it be?",
    );
  });
});

describe("answerItems, listSegments and actualAnswerType", () => {
  it("splits lists but keeps thousands separators and dates", () => {
    expect(answerItems("Real Betis, Real Madrid B")).toEqual(["Real Betis", "Real Madrid B"]);
    expect(answerItems("1,062")).toEqual(["1,062"]);
    expect(answerItems("1,062, 2,500")).toEqual(["1,062", "2,500"]);
    expect(answerItems("10,20,30")).toEqual(["10", "20", "30"]);
    expect(answerItems("Japan and China")).toEqual(["Japan", "China"]);
    expect(answerItems("March 3, 1999")).toEqual(["March 3, 1999"]);
    expect(answerItems("1982,Limerick")).toEqual(["1982", "Limerick"]);
    expect(listSegments("Jamaica, Trinidad and Tobago")).toEqual([
      "Jamaica",
      "Trinidad and Tobago",
    ]);
  });

  it.each([
    ["Yes", "yesno"],
    ["no.", "yesno"],
    ["Yes, a strong positive correlation (0.97) indicates that it does", "yesno"],
    ["1,062", "number"],
    ["45%", "number"],
    ["-0.75%", "number"],
    ["$1.2 million", "number"],
    ["2019", "number"],
    ["2019-05-01", "date"],
    ["March 3, 1999", "date"],
    ["30 April 1945", "date"],
    ["1990 - 91", "date"],
    ["great britain", "entity"],
    ["e2 - 2000", "entity"],
    ["No clear impact", "entity"],
    ["Real Betis, Real Madrid B", "list"],
    ["2880210, tony stewart", "list"],
    ["The total is large because many nations took part in the games", "text"],
    ["The table lists ten nations. Japan is third.", "text"],
  ])("%s -> %s", (answer, type) => {
    expect(actualAnswerType(answer)).toBe(type);
  });

  it("recognizes a yes/no at the head of an answer, not inside a phrase", () => {
    expect(leadingYesNo("Yes")).toBe("yes");
    expect(leadingYesNo("No, lane assignment has no effect")).toBe("no");
    expect(leadingYesNo("True")).toBe("yes");
    expect(leadingYesNo("No clear impact")).toBeNull();
    expect(leadingYesNo("Norway")).toBeNull();
  });
});

describe("typeScore", () => {
  it("scores fits, plausible answers and misfits", () => {
    expect(typeScore("number", "number")).toBe(2);
    expect(typeScore("number", "entity")).toBe(0);
    expect(typeScore("number", "list")).toBe(1);
    expect(typeScore("number", "text", "it is 203")).toBe(1);
    expect(typeScore("number", "text", "it is large")).toBe(0);
    expect(typeScore("yesno", "number")).toBe(0);
    expect(typeScore("date", "number")).toBe(2);
    expect(typeScore("entity", "list")).toBe(1);
    expect(typeScore("list", "entity")).toBe(2);
    expect(typeScore("list", "yesno")).toBe(0);
    expect(typeScore("text", "number")).toBe(2);
  });

  it("never rejects the gold answer of a TableBench question for its type", () => {
    const file = path.resolve(
      import.meta.dirname,
      "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
    );
    const rows = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { question: string; answer: string; qsubtype: string });
    const scored = rows
      .filter((row) => row.qsubtype !== "ChartGeneration")
      .map((row) => {
        const expected = expectedAnswerType(row.question);
        return typeScore(expected, actualAnswerType(row.answer), row.answer);
      });
    expect(scored.length).toBeGreaterThan(30);
    expect(scored.filter((s) => s === 0)).toEqual([]);
    // Most gold answers are exactly the kind their question asks for.
    expect(scored.filter((s) => s === 2).length / scored.length).toBeGreaterThan(0.9);
  });
});

describe("judgeType", () => {
  it("is sure that a bare number is no answer to who or which named thing", () => {
    expect(judgeType("Which nation won the most silver medals?", "79190").score).toBe(0);
    expect(judgeType("Who scored the most points in 2001?", "42").score).toBe(0);
    expect(judgeType("Which nation won the most silver medals?", "United States").score).toBe(2);
    // Things that may well be numbered, and numbers with words, stay merely doubtful.
    expect(judgeType("Which animal has the highest metabolic rate?", "6").score).toBe(1);
    expect(judgeType("Which team is in 3rd position?", "12 de octubre").score).toBe(1);
  });

  it("rejects no gold answer of the TableBench test set that the plain type rules accept", () => {
    // Every question of TableBench's test set with its gold answer (an extract of the set).
    const file = path.resolve(
      import.meta.dirname,
      "../fixtures/datasets/tablebench/tablebench_answers.jsonl",
    );
    const rows = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { question: string; answer: unknown; qsubtype: string })
      .filter((row) => row.qsubtype !== "ChartGeneration");
    expect(rows.length).toBeGreaterThan(800);
    const newlyRejected = rows.filter((row) => {
      const answer = String(row.answer);
      const plain = typeScore(expectedAnswerType(row.question), actualAnswerType(answer), answer);
      return plain > 0 && judgeType(row.question, answer).score === 0;
    });
    expect(newlyRejected).toEqual([]);
  });
});
