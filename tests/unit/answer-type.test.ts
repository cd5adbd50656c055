import { describe, expect, it } from "vitest";
import {
  actualAnswerType,
  answerItems,
  expectedAnswerType,
  typeScore,
} from "../../blackboard/answer-type.js";

describe("expectedAnswerType", () => {
  it.each([
    ["What is the average number of tropical cyclones per season?", "number"],
    ["How many points did Wattstown RFC score in the season?", "number"],
    ["According to the table, how many tries did Llandeilo RFC score in the season?", "number"],
    ["What percentage of votes did the winner get?", "number"],
    ["Is the total of gold medals greater than 200?", "yesno"],
    ["Did Japan win more gold than China?", "yesno"],
    ["In what year was the highest attendance?", "date"],
    ["When did the team win its first title?", "date"],
    ["Which nation ranked 4th in the medal count ?", "entity"],
    ["Who scored the most goals?", "entity"],
    ["List the nations with more than 10 gold medals.", "list"],
    ["Which top3 factors in the table, such as 'played', 'drawn', impact the points?", "list"],
    ["How does the number of examinees affect the pass percentage over the years?", "text"],
  ])("%s -> %s", (question, type) => {
    expect(expectedAnswerType(question)).toBe(type);
  });
});

describe("actualAnswerType and answerItems", () => {
  it("splits lists but keeps thousands separators", () => {
    expect(answerItems("Real Betis, Real Madrid B")).toEqual(["Real Betis", "Real Madrid B"]);
    expect(answerItems("1,062")).toEqual(["1,062"]);
    expect(answerItems("10,20,30")).toEqual(["10", "20", "30"]);
    expect(answerItems("Japan and China")).toEqual(["Japan", "China"]);
  });

  it.each([
    ["Yes", "yesno"],
    ["1,062", "number"],
    ["45%", "number"],
    ["2019", "number"],
    ["2019-05-01", "date"],
    ["March 3, 1999", "date"],
    ["great britain", "entity"],
    ["Real Betis, Real Madrid B", "list"],
    ["The total is large because many nations took part in the games", "text"],
  ])("%s -> %s", (answer, type) => {
    expect(actualAnswerType(answer)).toBe(type);
  });
});

describe("typeScore", () => {
  it("scores fits, plausible answers and misfits", () => {
    expect(typeScore("number", "number")).toBe(2);
    expect(typeScore("number", "entity")).toBe(0);
    expect(typeScore("number", "list")).toBe(1);
    expect(typeScore("yesno", "number")).toBe(0);
    expect(typeScore("date", "number")).toBe(2);
    expect(typeScore("entity", "list")).toBe(1);
    expect(typeScore("text", "number")).toBe(2);
  });
});
