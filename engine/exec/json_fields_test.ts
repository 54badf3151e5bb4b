import assert from "node:assert/strict";
import { jsonFieldReader } from "./json_fields.ts";

function viaParse(line: string, names: readonly string[]) {
  const v = JSON.parse(line);
  return Object.fromEntries(names.map((n) => [n, Object.hasOwn(v, n) ? v[n] : null]));
}

Deno.test("jsonFieldReader() reads the fields of flat lines as JSON.parse does", () => {
  const names = ["status", "path", "ok", "gone"];
  const read = jsonFieldReader(names);
  const lines = [
    '{"status":200,"path":"/a","ok":true}',
    ' { "path" : "/b" , "status" : -1.5e3 , "ok" : false }\r',
    '{"status":null,"path":"x,"}',
    '{"method":"status","status":0}',
    '{"a":"{","b":"status","path":"status:","status":3}',
    '{"status":1,"status":2}',
    '{"pathx":"no","xpath":"no","path":""}',
    '{"__proto__":1,"status":"été"}',
    "{}",
  ];
  for (const line of lines) {
    const got = read(line);
    assert.notEqual(got, undefined, line);
    assert.deepEqual(got, viaParse(line, names), line);
  }
  assert.deepEqual(read('{"status":1,"status":2}'), {
    status: 2,
    path: null,
    ok: null,
    gone: null,
  });
  assert.deepEqual(read('{"method":"status","status":0}')?.status, 0);
});

Deno.test("jsonFieldReader() leaves lines of other shapes to JSON.parse", () => {
  const read = jsonFieldReader(["status"]);
  for (
    const line of [
      '{"status":{"code":200}}',
      '{"status":[1]}',
      '{"st\\u0061tus":1}',
      '{"status":"a\\"b"}',
      '{"status":01}',
      '{"status":1,}',
      '{"status":1',
      '[{"status":1}]',
      '{"status":"tab\there"}',
      "not json",
    ]
  ) {
    assert.equal(read(line), undefined, line);
  }
});

Deno.test("jsonFieldReader() always parses for a name that JSON escapes", () => {
  assert.equal(jsonFieldReader(['a"b'])('{"x":1}'), undefined);
});
