# Mutations of the HTTP front (routes/guarded_server.ts, routes/front/): issue 22 item 1 and the
# front's pins of issue 29. Sourced by tools/mutation_check.sh: run NAME FILE SED-EXPR TEST-FILES...
D=tests/front/front_deadlines_test.ts
F=tests/front/front_framing_test.ts
R=tests/front/front_response_test.ts
run front-header-clock-not-restarted routes/guarded_server.ts '/A new request: its own clock/,+3s/conn.since = clock();//' $D
run front-header-bytes-accumulate routes/guarded_server.ts '/A new request: its own clock/,+4s/conn.headBytes = 0;//' $F
run front-body-deadline-dropped routes/guarded_server.ts 's/return waited > options.bodyTimeoutMs;/return false;/' $D
run front-body-deadline-as-a-whole routes/guarded_server.ts '/if (conn.phase === "head") return headBytes(conn, rest);/{n;s/conn.since = clock();//}' $D
run front-http2-accepted routes/guarded_server.ts 's/if (start.length >= HTTP2_PREFACE_START.length \&\& looksLikeHttp2(start)) {/if (false) {/' $D
run front-http2-goaway-no-error-code routes/front/refusals.ts 's/0, 0, 0, 0x0d/0, 0, 0, 0/' $D
run front-client-address-not-stripped routes/front/request_head.ts 's/if (line === 0 || !namesClientAddress(head, start, stop)) {/if (true) {/' $F
run front-client-address-not-set routes/front/request_head.ts 's/latin1Bytes(`${CLIENT_ADDRESS_HEADER}: ${clientAddress}\\r\\n\\r\\n`)/latin1Bytes("\\r\\n")/' $F
run front-deadline-while-server-owes routes/guarded_server.ts 's/      case "response":/      case "response": return waited > options.idleTimeoutMs;/' $R
run front-pipelined-not-held routes/guarded_server.ts 's/      if (conn.phase === "response") {/      if (false) {/' $F
run front-head-answer-read-for-a-body routes/front/http_parser.ts 's/return this.answersHead ? SKIP_BODY : OK;/return OK;/' $R
run front-interim-answer-taken-as-final routes/guarded_server.ts 's/if (step.status >= 200) await answered(conn);/await answered(conn);/' $F
run front-parser-takes-responses-too routes/front/http_parser.ts 's/llhttp_alloc(type === "request" ? REQUEST : RESPONSE)/llhttp_alloc(0)/' $F
P=routes/front/http_parser_test.ts
run front-parser-error-reason-lost routes/front/http_parser.ts 's/return end > at ? latin1.decode(memory.subarray(at, end)) : `llhttp error ${code}`;/return `llhttp error ${code}`;/' $P
run front-parser-input-not-grown routes/front/http_parser.ts 's/m.inputSize = Math.max(bytes.length, 64 \* 1024);/m.inputSize = 64 * 1024;/' $P
run front-client-address-prefix-dropped routes/front/request_head.ts 's/return head\[at\] === COLON;/return true;/' routes/front/request_head_test.ts
run front-header-limit-doubled routes/guarded_server.ts 's/if (conn.headBytes > MAX_HEADER_BYTES) {/if (conn.headBytes > 2 * MAX_HEADER_BYTES) {/' $F
run front-busy-connections-evicted routes/guarded_server.ts 's/if (conn.phase === "body" || conn.phase === "response") continue;/if (conn.phase === "body") continue;/' routes/guarded_server_test.ts
run front-patterns-try-unbounded routes/patterns.ts 's/return new Hono<AppEnv>().post("\/patterns\/try", limit, /return new Hono<AppEnv>().post("\/patterns\/try", /' tests/front/body_limits_test.ts
E=tests/front/console_events_test.ts
run console-resume-without-last-event-id console/sse.ts 's/if (event.id !== "") lastEventId = event.id;//' $E
run console-cut-stream-not-resumed console/sse.ts 's/      failure = e;/      throw e;/' $E
run console-heartbeat-taken-for-an-event console/sse.ts 's/if (fields === 0) continue;//' $E
# The front's clock counting the server's own stall against the client (a busy run's flake 10).
run front-stall-counted routes/guarded_server.ts 's/stalled += Math.max(0, at - swept - sweepMs);/stalled += 0;/' routes/guarded_server_test.ts
