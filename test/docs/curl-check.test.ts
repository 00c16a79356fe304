import { curlProblems } from './curl-check';

// The checker the sample test runs over every shell sample of the documentation: lines it must
// let through, and lines it must catch.

it.each([
  ['plain URL', 'curl -sS http://127.0.0.1:3000/api/Product'],
  ['no -s at all', 'curl http://127.0.0.1:3000/api/Product'],
  ['brackets with -g', `curl -sS -g "$BASE/api/Product?where[0][type]=isTrue&where[0][attribute]=isActive"`],
  ['brackets with a cluster holding g', `curl -sSg "\${BASE}/api/Product?where[0][type]=isTrue"`],
  ['long options', `curl --silent --show-error --globoff "\${BASE}/api/Product?where[0][type]=isTrue"`],
  ['braces of a variable only', 'curl -sS -H "$H" "${BASE}/api/Product/${ID}"'],
  ['brackets in the data, not the URL', `curl -sS -X POST -d '{"ids":["a","b"]}' "$BASE/api/upsert"`],
  ['brackets in a header value', `curl -sS -H 'X-List: [1]' --data-raw '[1]' http://127.0.0.1:3000/api/upsert`],
  ['a token taken in a substitution', `TOKEN=$(curl -sS -u admin:pw -H 'Authorization-Token-Only: true' $BASE/api/userSession | node -pe 'JSON.parse(x)[0]')`],
  ['a comment after the command', 'curl -sS -o small.png $BASE/api/File/1/thumbnail/small   # where[0] is not a URL'],
  ['a continued command', `curl -sS -g \\\n  "http://127.0.0.1:3000/api/Product?where[0][type]=isTrue"`],
])('lets through: %s', (_name, line) => {
  expect(curlProblems(line)).toEqual([]);
});

it.each([
  ['brackets after a braced variable', `curl -sS "\${BASE}/api/Product?where[0][type]=isTrue"`, /needs -g/],
  ['brackets after a variable', `curl -sS -H "$H" "$BASE/api/Product?where[0][type]=isTrue"`, /needs -g/],
  ['brackets in a bare URL', 'curl -sS 127.0.0.1:3000/api/Product?where[0][type]=isTrue', /needs -g/],
  ['brackets after an option with its value in the cluster', `curl -sSo out.json 'http://127.0.0.1:3000/api/Product?where[0][type]=isTrue'`, /needs -g/],
  ['brackets in --url', `curl -sS --url 'http://127.0.0.1:3000/api/Product?where[0][type]=isTrue'`, /needs -g/],
  ['braces of a literal in single quotes', `curl -sS 'http://127.0.0.1:3000/api/{a,b}'`, /needs -g/],
  ['-s alone', 'curl -s http://127.0.0.1:3000/api/Product', /-s hides errors/],
  ['--silent alone', 'curl --silent http://127.0.0.1:3000/api/Product', /-s hides errors/],
  ['-s in a substitution', 'TOKEN=$(curl -s -u admin:pw $BASE/api/userSession)', /-s hides errors/],
  ['-s on a continued line', 'curl -H "$H" \\\n  -s http://127.0.0.1:3000/api/Product', /-s hides errors/],
])('catches: %s', (_name, line, problem) => {
  const problems = curlProblems(line);
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(problem);
});
