// An OTLP/HTTP metrics receiver on loopback for tests/integration/test_otlp.py: every POST is
// decoded with OpenTelemetry's own message definitions (the protobufjs root that npm's
// @opentelemetry/otlp-transformer generates from opentelemetry-proto) and printed as one JSON
// line on stdout: {path, contentType, headers, request} with `request` the decoded
// ExportMetricsServiceRequest (64-bit integers as strings, enums as numbers), or {error} when the
// body is not one. Strict both ways: protobuf re-encoded to as many bytes (no field the
// definitions do not know), JSON equal to its own round trip through the definitions (no name,
// type or enum the OTLP JSON mapping does not have).
//   node receiver.js MODE    MODE: ok (200), hang (never answers), status:N (answers N)
// The first line is {"port": N}.
"use strict";
const http = require("http");
const path = require("path");
const root = require(path.join(__dirname, "node_modules", "@opentelemetry", "otlp-transformer",
                               "build", "src", "generated", "root.js"));
const Request = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const toObject = (m) => Request.toObject(m, {longs: String, enums: Number, defaults: false, json: true});

// JSON.stringify with keys sorted, for comparing two objects.
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  return v;
}

function decode(contentType, body) {
  if (contentType === "application/x-protobuf") {
    const msg = Request.decode(body);
    const again = Request.encode(msg).finish();
    if (again.length !== body.length)
      throw new Error(`${body.length} bytes, ${again.length} known to the definitions`);
    return toObject(msg);
  }
  if (contentType === "application/json") {
    const sent = JSON.parse(body.toString("utf8"));
    const decoded = toObject(Request.fromObject(sent));
    const a = JSON.stringify(canonical(sent)), b = JSON.stringify(canonical(decoded));
    if (a !== b) throw new Error(`not the OTLP JSON mapping: sent ${a}, the definitions ${b}`);
    return decoded;
  }
  throw new Error(`Content-Type ${contentType}`);
}

const mode = process.argv[2] || "ok";
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const line = {path: req.url, contentType: req.headers["content-type"], headers: req.headers};
    try {
      line.request = decode(req.headers["content-type"], Buffer.concat(chunks));
    } catch (e) {
      line.error = String(e.message || e);
    }
    process.stdout.write(JSON.stringify(line) + "\n");
    if (mode === "hang") return;  // the connection stays open, unanswered
    const status = mode.startsWith("status:") ? Number(mode.slice(7)) : (line.error ? 400 : 200);
    res.writeHead(status, {"Content-Type": "application/json"});
    res.end(status === 200 ? "{}" : '{"message":"refused by the test"}');
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({port: server.address().port}) + "\n");
});
process.on("SIGTERM", () => process.exit(0));
