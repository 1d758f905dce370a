import t from 'tap'
import { jsonSyntaxError, locatePaths, parentOf, pathOf } from '../../shared/json-source.js'

t.test('paths: written from parts, and every walk up ends at the whole text', async (t) => {
  t.equal(pathOf(['options', 3, 'prices', 2, 'to']), 'options[3].prices[2].to')
  t.equal(pathOf([]), '')
  t.equal(pathOf([0, 'name']), '[0].name')
  t.same(['zones[1].polygon', 'zones[1]', 'zones', 'options[0].prices[3].to', 'name', ''].map(parentOf), ['zones[1]', 'zones', '', 'options[0].prices[3]', '', ''])
})

t.test('a part is found where the text has it: a member at its name, an element at its value', async (t) => {
  const text = [
    '{',
    '  "name": "Lagos",',
    '  "zones": [',
    '    {"name": "A [not a bracket", "polygon": [[1, 2], [3, 4]]},',
    '    {"name": "B \\" {", "polygon": [[1, 2],',
    '      [3, 4]]}',
    '  ],',
    '  "n\\u0061me": "the last name counts"',
    '}',
  ].join('\r\n')
  const found = locatePaths(text, ['name', 'zones[1].polygon', 'zones[1].polygon[1]', 'zones[1].polygon[1][0]', '', 'zones[0].polygon[1]'])
  t.same(Object.fromEntries(found), {
    name: { line: 8, column: 3 },
    'zones[1].polygon': { line: 5, column: 24 },
    'zones[1].polygon[1]': { line: 6, column: 7 },
    'zones[1].polygon[1][0]': { line: 6, column: 8 },
    '': { line: 1, column: 1 },
    'zones[0].polygon[1]': { line: 4, column: 54 },
  })
})

t.test('a part the text lacks is placed at its nearest enclosing part', async (t) => {
  const text = '{\n  "name": "No Zones",\n  "options": [\n    {"label": "x"}\n  ]\n}'
  t.same(Object.fromEntries(locatePaths(text, ['zones', 'zones[0].polygon', 'options[0].prices[3].to', 'options[4]', 'name.first'])), {
    zones: { line: 1, column: 1 },
    'zones[0].polygon': { line: 1, column: 1 },
    'options[0].prices[3].to': { line: 4, column: 5 },
    'options[4]': { line: 3, column: 3 },
    'name.first': { line: 2, column: 3 },
  })
  t.same(Object.fromEntries(locatePaths('[1, {"a": 2}]', ['[1].a', 'zones'])), { '[1].a': { line: 1, column: 6 }, zones: { line: 1, column: 1 } }, 'a path into an array, and a name where the text is an array')
})

t.test('a text that is not JSON: why, at the line and column where it stops being JSON', async (t) => {
  const cases: [string, string, number, number][] = [
    ['', 'expected a value, found the end of the file', 1, 1],
    ['{\n  "zones": [\n', "the file ends before an array is closed: a ']' is missing", 3, 1],
    ['{\n  "a": 1,\n  "b": 2\n  "c": 3\n}', "expected ',' or '}', found '\"c\"'", 4, 3],
    ['{\n  "a": [1, 2,]\n}', "a comma before ']' is not allowed", 2, 13],
    ['{"a": 1,\n}', "a comma before '}' is not allowed", 1, 8],
    ['{"a" 1}', "expected ':' after a member's name, found '1'", 1, 6],
    ['{"a": }', "expected a value, found '}'", 1, 7],
    ["{'a': 1}", 'unexpected character "\'"', 1, 2],
    ['{a: 1}', "unexpected character 'a'", 1, 2],
    ['[01]', "expected ',' or ']', found '1'", 1, 3],
    ['[1.]', "unexpected character '.'", 1, 3],
    ['[-]', "unexpected character '-'", 1, 2],
    ['[tru]', "unexpected character 't'", 1, 2],
    ['{"name": "Lagos\n', 'a line break inside a string (is its closing quote missing?)', 1, 16],
    ['["tab\there"]', 'U+0009 inside a string must be written as an escape', 1, 6],
    ['["\\x"]', 'invalid escape "\\\\x" in a string', 1, 3],
    ['["\\u12G4"]', 'invalid escape "\\\\u12G4" in a string', 1, 3],
    ['["open', 'a string is not closed', 1, 2],
    ['\ufeff{}', 'unexpected character U+FEFF', 1, 1],
    ['{} {}', "the file goes on after its JSON value ends: found '{'", 1, 4],
    ['[}', "expected a value, found '}'", 1, 2],
    ['{"a": "a very long string value of many words" "b"}', "expected ',' or '}', found '\"b\"'", 1, 48],
    ['{"a": 1 "a very long string value of many words"}', "expected ',' or '}', found '\"a very long string valu…'", 1, 9],
  ]
  for (const [text, message, line, column] of cases) {
    t.throws(() => JSON.parse(text), SyntaxError, `JSON.parse refuses ${JSON.stringify(text)} too`)
    t.same(jsonSyntaxError(text), { message, at: { line, column } }, JSON.stringify(text))
  }
  for (const text of ['{}', ' [ ] ', '{"a": [1, -2.5e3, true, false, null, "\\u00e9\\n\\"", {}]}', '"\ud83d"', '0']) {
    t.doesNotThrow(() => JSON.parse(text))
    t.equal(jsonSyntaxError(text), null, `${JSON.stringify(text)} is JSON`)
  }
})

t.test('a deeply nested text is read in a loop, not on the call stack', async (t) => {
  const depth = 1_000_000
  const closed = `${'['.repeat(depth)}${']'.repeat(depth)}`
  t.equal(jsonSyntaxError(closed), null)
  t.same(Object.fromEntries(locatePaths(closed, ['zones[0].polygon', '[0][0][0]'])), { 'zones[0].polygon': { line: 1, column: 1 }, '[0][0][0]': { line: 1, column: 4 } })
  t.same(jsonSyntaxError('['.repeat(depth)), { message: "the file ends before an array is closed: a ']' is missing", at: { line: 1, column: depth + 1 } })
  const deepInside = `{"zones": [${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}], "name": "x"}`
  t.same(Object.fromEntries(locatePaths(deepInside, ['name', 'zones[0].polygon'])), { name: { line: 1, column: deepInside.indexOf('"name"') + 1 }, 'zones[0].polygon': { line: 1, column: 12 } })
})
