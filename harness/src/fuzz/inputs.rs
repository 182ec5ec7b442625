//! The inputs of each class, made from the seed, the class and the index
//! alone, each with the answer the rules call for (`Due`). Input `i` of a
//! class uses template `i % templates`, so that any count at least the
//! number of templates tries every one; the seed varies what is inside.

use super::rng::Rng;
use crate::transport::Transport;
use crate::wire::{self, MetaMode, Revision};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Framing,
    Envelope,
    Params,
    Headers,
    /// Not inputs: the tools' descriptors, listed twice and judged.
    Descriptors,
    /// Calls of the tools the call policy allows, at and beyond their
    /// schemas' bounds (made from the tools walk, `arguments.rs`).
    Arguments,
}

impl Class {
    pub const ALL: [Class; 6] = [Class::Framing, Class::Envelope, Class::Params, Class::Headers, Class::Arguments, Class::Descriptors];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Framing => "framing",
            Class::Envelope => "envelope",
            Class::Params => "params",
            Class::Headers => "headers",
            Class::Descriptors => "descriptors",
            Class::Arguments => "arguments",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// How many templates the class has on this transport (0: none).
    pub fn templates(self, t: Transport) -> usize {
        match (self, t) {
            (Class::Framing, Transport::Stdio) => 9,
            (Class::Framing, Transport::Http) => 8,
            (Class::Envelope, _) => 16,
            (Class::Params, _) => 9,
            (Class::Headers, Transport::Http) => 5,
            (Class::Headers, Transport::Stdio) => 0,
            (Class::Descriptors | Class::Arguments, _) => 0,
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            Class::Framing => {
                "broken framing: not JSON, truncated, NUL, invalid UTF-8, BOM, CRLF, huge, two messages in one (stdio); wrong or missing Content-Type and Accept, empty, invalid, huge bodies, wrong methods, bad chunking (HTTP)"
            }
            Class::Envelope => {
                "broken JSON-RPC envelopes: jsonrpc missing or wrong, ids null, float, bool, object, 2^63 or 10 KB long, method not a string, params an array or a scalar, notifications (one named like a request), responses and batches sent to the server, unknown methods"
            }
            Class::Params => {
                "broken params of the methods every server has: wrong types, missing and unknown fields, 10,000 levels of nesting, long strings, Unicode edge cases (lone surrogates, bidi controls, zero-width, NFC/NFD twins), calls of tools that do not exist"
            }
            Class::Headers => {
                "broken MCP headers: control characters, 64 KiB values, many duplicates, sentinels in the wrong case, bytes that are not ASCII"
            }
            Class::Descriptors => {
                "the tools' descriptors, listed twice: hidden-instruction markers, invisible and bidi characters, names that differ only by case or look-alike letters, descriptions that change between listings"
            }
            Class::Arguments => {
                "calls of the tools the call policy allows, with arguments at and beyond their schemas' bounds (maximum, minimum, exclusive bounds, lengths, enum, additionalProperties)"
            }
        }
    }
}

/// What goes over the wire.
#[derive(Debug, Clone)]
pub enum Payload {
    /// One JSON-RPC message's text: a stdio line, or a POST body with the
    /// revision's standard headers.
    Message(Vec<u8>),
    /// stdio: bytes written as they are, line ends included.
    Bytes(Vec<u8>),
    /// HTTP: a request of its own shape.
    Http(HttpShape),
}

#[derive(Debug, Clone, Default)]
pub struct HttpShape {
    pub method: &'static str,
    /// Standard headers left out (lower-case names).
    pub drop: Vec<&'static str>,
    /// Headers added (or put instead of a standard one of that name), the
    /// value as raw bytes.
    pub set: Vec<(String, Vec<u8>)>,
    /// Headers added as more lines, duplicates kept.
    pub add: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    /// Sent as `Transfer-Encoding: chunked` with these bytes as the body
    /// exactly (bad chunking), instead of a Content-Length.
    pub chunked: bool,
}

/// The answer the rules call for.
#[derive(Debug, Clone, PartialEq)]
pub enum Due {
    /// A request: a response with this id. `want` is the conventional kind;
    /// `null_ok`: the input is not a valid MCP request (an odd id, an
    /// invalid envelope, text a strict reader refuses), so an error whose id
    /// is null is right too, and silence breaks a convention, not a stated
    /// rule; `also`: other ids the input carried (answering them is not
    /// another request's answer).
    Response { id: Value, want: Want, null_ok: bool, also: Vec<Value> },
    /// Nothing that can be read as a request: an error whose id is null (or
    /// an answer to one of `also`, when a lenient reader found a request in
    /// it).
    Unreadable { want: Want, also: Vec<Value> },
    /// A notification (a response to it is forbidden) or a response sent
    /// to the server (`response`: answering it is only odd).
    Nothing { response: bool },
    /// HTTP that breaks the transport's rules: any HTTP reply; by
    /// convention a 4xx (`close_ok`: closing the connection is fine too;
    /// `served_ok`: so is serving it, as for a large but valid body).
    Refusal { close_ok: bool, served_ok: bool },
}

/// The conventional kind of answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// An error with one of these codes.
    Error(&'static [i64]),
    /// An error of any code, or a result with `isError: true` (a tool
    /// call); never plain success.
    NotSuccess,
    /// Anything: only the universal rules judge it.
    Any,
    /// Tool arguments the schema forbids: an error or `isError: true`
    /// ("Servers MUST validate all tool inputs"); plain success breaks it.
    Rejected,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub class: Class,
    pub index: usize,
    pub what: String,
    pub payload: Payload,
    pub due: Due,
    /// The message as JSON, when it is one (for shrinking its params).
    pub json: Option<Value>,
}

/// Where a class's ids start (each input has its own, never reused).
fn id_base(c: Class) -> i64 {
    900_000 + 10_000 * c as i64
}

/// The revision's one request every server serves without state.
pub fn simple_method(rev: Revision) -> &'static str {
    if rev.is_stateless() { "server/discover" } else { "ping" }
}

/// A request of the revision (modern: `_meta` in params).
pub fn request(rev: Revision, id: &Value, method: &str, params: Option<Value>) -> Value {
    let params = if rev.is_stateless() { wire::modern_params(params.as_ref(), MetaMode::Full, rev.as_str()) } else { params };
    wire::request(id, method, params)
}

fn bytes(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// Input `index` of `class`.
pub fn input(seed: u64, class: Class, index: usize, t: Transport, rev: Revision) -> Option<Input> {
    let n = class.templates(t);
    if n == 0 {
        return None;
    }
    let mut rng = Rng::for_input(seed, class as u64, index as u64);
    let id = json!(id_base(class) + index as i64);
    let tpl = index % n;
    let (what, payload, due, json) = match class {
        Class::Framing if t == Transport::Stdio => super::inputs_framing::stdio(tpl, &mut rng, &id, rev),
        Class::Framing => super::inputs_framing::http(tpl, &mut rng, &id, rev),
        Class::Envelope => envelope(tpl, &mut rng, &id, rev),
        Class::Params => params(tpl, index / n, &mut rng, &id, rev),
        Class::Headers => super::inputs_framing::headers(tpl, &mut rng, &id, rev),
        Class::Descriptors | Class::Arguments => return None,
    };
    Some(Input { class, index, what, payload, due, json })
}

type Made = (String, Payload, Due, Option<Value>);

fn msg(what: impl Into<String>, v: Value, due: Due) -> Made {
    (what.into(), Payload::Message(bytes(&v)), due, Some(v))
}

fn resp(id: &Value, want: Want) -> Due {
    Due::Response { id: id.clone(), want, null_ok: false, also: vec![] }
}

const INVALID_REQUEST: &[i64] = &[-32600];
const INVALID_PARAMS: &[i64] = &[-32602];
const PARAMS_OR_REQUEST: &[i64] = &[-32602, -32600];

fn envelope(tpl: usize, rng: &mut Rng, id: &Value, rev: Revision) -> Made {
    let m = simple_method(rev);
    let good = request(rev, id, m, None);
    let with = |k: &str, v: Value| {
        let mut g = good.clone();
        g[k] = v;
        g
    };
    let odd_id = |v: Value| Due::Response { id: v, want: Want::Error(INVALID_REQUEST), null_ok: true, also: vec![] };
    // Not a valid Request object: JSON-RPC gives an error "in detecting the
    // id (e.g. Parse error/Invalid Request)" a null id, so null is right
    // too, and so is the request's id.
    let invalid = |want: Want| Due::Response { id: id.clone(), want, null_ok: true, also: vec![] };
    match tpl {
        0 => {
            let mut g = good.clone();
            g.as_object_mut().map(|o| o.remove("jsonrpc"));
            msg("`jsonrpc` missing", g, invalid(Want::Error(INVALID_REQUEST)))
        }
        1 => {
            let v = rng.pick(&[json!("1.0"), json!(2.0), json!("2.0 "), json!(null)]).clone();
            msg(format!("`jsonrpc` is {v}"), with("jsonrpc", v), invalid(Want::Error(INVALID_REQUEST)))
        }
        2 => msg("`id` is null", with("id", Value::Null), odd_id(Value::Null)),
        3 => {
            let f = json!(rng.below(1000) as f64 + 0.5);
            msg(format!("`id` is a float ({f})"), with("id", f.clone()), odd_id(f))
        }
        4 => {
            let b = json!(rng.below(2) == 1);
            msg(format!("`id` is a bool ({b})"), with("id", b.clone()), odd_id(b))
        }
        5 => {
            let o = rng.pick(&[json!({"n": 1}), json!([1]), json!({})]).clone();
            msg(format!("`id` is {}", if o.is_array() { "an array" } else { "an object" }), with("id", o.clone()), odd_id(o))
        }
        6 => {
            // 2^63 and beyond: an integer, but not one a 64-bit reader holds.
            let text: &str = rng.pick::<&str>(&["9223372036854775808", "18446744073709551616", "-9223372036854775809"]);
            let big: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            msg(format!("`id` is {big}"), with("id", big.clone()), Due::Response { id: big, want: Want::Any, null_ok: true, also: vec![] })
        }
        7 => {
            let long = json!(format!("fuzz-{}", rng.word(10_240)));
            msg(
                "`id` is a 10 KB string",
                with("id", long.clone()),
                Due::Response { id: long, want: Want::Any, null_ok: false, also: vec![] },
            )
        }
        8 => {
            let v = rng.pick(&[json!(123), json!(["ping"]), json!({"name": m}), json!(null)]).clone();
            msg(format!("`method` is {v}"), with("method", v), invalid(Want::Error(INVALID_REQUEST)))
        }
        9 => msg("`params` is an array", with("params", json!([1, 2, 3])), invalid(Want::Error(PARAMS_OR_REQUEST))),
        10 => {
            let v = rng.pick(&[json!(5), json!("params"), json!(true)]).clone();
            msg(format!("`params` is {v}"), with("params", v), invalid(Want::Error(PARAMS_OR_REQUEST)))
        }
        11 => {
            let n = wire::notification(&format!("notifications/fuzz-{}", rng.word(6)), None);
            msg("a notification of an unknown method", n, Due::Nothing { response: false })
        }
        12 => {
            let r = json!({"jsonrpc": "2.0", "id": format!("fuzz-r{}", rng.word(6)), "result": {}});
            msg("a response sent to the server, for a request it never sent", r, Due::Nothing { response: true })
        }
        13 => {
            let id2 = json!(id.as_i64().unwrap_or(0) + 5_000);
            let batch = json!([good.clone(), request(rev, &id2, m, None)]);
            if rev.has(crate::wire::Feature::Batching) {
                msg(
                    "a batch of two requests (this revision allows batches)",
                    batch,
                    Due::Response { id: id.clone(), want: Want::Any, null_ok: false, also: vec![id2] },
                )
            } else {
                msg(
                    "a batch of two requests (this revision has no batches)",
                    batch,
                    Due::Unreadable { want: Want::Error(INVALID_REQUEST), also: vec![id.clone(), id2] },
                )
            }
        }
        14 => {
            let method = format!("fuzz/{}", rng.word(8));
            msg(format!("an unknown method `{method}`"), request(rev, id, &method, None), resp(id, Want::Error(&[-32601])))
        }
        _ => {
            // No id makes it a notification, whatever the method is named:
            // a request's method (or an unknown one) gets no answer either.
            let unknown = format!("fuzz/{}", rng.word(8));
            let method = rng.pick(&[m, "tools/list", unknown.as_str()]).to_string();
            let mut n = request(rev, id, &method, None);
            n.as_object_mut().map(|o| o.remove("id"));
            msg(format!("a notification named like a request (`{method}`, no id)"), n, Due::Nothing { response: false })
        }
    }
}

/// Nested arrays `depth` deep around a number.
pub fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// A size for a template's `round`-th input: the largest the first time,
/// after that one of `min`·2^k up to it (sizes between, each as likely as
/// the next power of two: a limit below the largest is found too).
fn size(round: usize, rng: &mut Rng, min: usize, max: usize) -> usize {
    if round == 0 {
        return max;
    }
    let steps = (max / min.max(1)).max(1).ilog2() as u64 + 1;
    (min << rng.below(steps)).min(max)
}

fn params(tpl: usize, round: usize, rng: &mut Rng, id: &Value, rev: Revision) -> Made {
    let list = |p: Value| request(rev, id, "tools/list", Some(p));
    let call = |p: Value| request(rev, id, "tools/call", Some(p));
    // Names no server has: the calls below can run no tool.
    let nobody = format!("fuzz-no-such-tool-{}", rng.word(8));
    match tpl {
        0 => {
            let v = rng.pick(&[json!(5), json!(true), json!({"page": 2}), json!([""])]).clone();
            msg(
                format!("tools/list with `cursor` {v} (a cursor is a string)"),
                list(json!({"cursor": v})),
                resp(id, Want::Error(INVALID_PARAMS)),
            )
        }
        1 => {
            let len = size(round, rng, 16, 400 * 1024);
            let shown = if len >= 1024 { format!("{} KiB", len / 1024) } else { format!("{len} B") };
            msg(format!("tools/list with a {shown} unknown cursor"), list(json!({"cursor": rng.word(len)})), resp(id, Want::Any))
        }
        2 => {
            // Deep nesting is written as text: a JSON value this deep would
            // overflow the stack of a recursive writer (ours included).
            let depth = size(round, rng, 10, 10_000);
            let mut v = list(json!({"fuzz": "DEPTH"}));
            let text = v.to_string().replace("\"DEPTH\"", &nested(depth));
            v = Value::Null;
            // A reader with a depth limit cannot read the id either: a parse
            // error with a null id is right; a crash or a hang is not.
            let due = Due::Response { id: id.clone(), want: Want::Any, null_ok: true, also: vec![] };
            (
                format!("tools/list with a value {depth} levels deep in params"),
                Payload::Message(text.into_bytes()),
                due,
                Some(v).filter(|x| !x.is_null()),
            )
        }
        3 => msg("tools/call without `name`", call(json!({"arguments": {}})), resp(id, Want::NotSuccess)),
        4 => {
            let v = rng.pick(&[json!(7), json!(null), json!(["echo"]), json!({"name": "echo"})]).clone();
            msg(format!("tools/call with `name` {v}"), call(json!({"name": v, "arguments": {}})), resp(id, Want::NotSuccess))
        }
        5 => {
            let args = rng.pick(&[json!([1, 2]), json!("text"), json!(42), json!({"a": {"b": [null]}})]).clone();
            msg(
                format!("tools/call of an unknown tool `{nobody}` with `arguments` {args}"),
                call(json!({"name": nobody, "arguments": args})),
                resp(id, Want::NotSuccess),
            )
        }
        6 => {
            // Lone surrogates go as JSON escapes (the text stays UTF-8).
            let edge =
                *rng.pick(&["\\ud800", "\\udfff", "\\u202egnp.exe", "a\\u200bb\\u2060c", "e\\u0301", "\\u00e9", "\\ufeff", "\\u0000"]);
            let text = list(json!({"cursor": "EDGE"})).to_string().replace("\"EDGE\"", &format!("\"{edge}\""));
            // A lone surrogate is in JSON's grammar but not Unicode: a reader
            // may refuse the text (a parse error, null id).
            let due = Due::Response { id: id.clone(), want: Want::Any, null_ok: true, also: vec![] };
            (format!("tools/list with the cursor \"{edge}\" (Unicode edge case)"), Payload::Message(text.into_bytes()), due, None)
        }
        7 => {
            let mut extra = serde_json::Map::new();
            extra.insert(format!("fuzz{}", rng.word(5)), json!({"nested": [1, "two", null]}));
            msg("tools/list with unknown fields in params", list(Value::Object(extra)), resp(id, Want::Any))
        }
        _ => {
            // Written as text (a map of this many members is slow to build
            // for every input); not shrunk.
            let keys = size(round, rng, 2, 10_000);
            let m = simple_method(rev);
            let mut members = String::with_capacity(keys * 12);
            for i in 0..keys {
                use std::fmt::Write;
                let _ = write!(members, "\"k{i}\":{i},");
            }
            let text = request(rev, id, m, Some(json!({"fuzzLast": 0})))
                .to_string()
                .replace("\"fuzzLast\":0", &format!("{members}\"fuzzLast\":0"));
            (format!("{m} with {keys} unknown params"), Payload::Message(text.into_bytes()), resp(id, Want::Any), None)
        }
    }
}
