//! A small Server-Sent Events parser that reports what it sees, including
//! framing it has to skip, instead of hiding it.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: String,
}

#[derive(Default)]
pub struct Parser {
    buf: Vec<u8>,
    data: Vec<String>,
    event: Option<String>,
    id: Option<String>,
    saw_cr: bool,
    /// Events whose data was empty (priming events) and comment lines.
    pub empty_events: usize,
    pub comments: usize,
}

impl Parser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed bytes; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.saw_cr {
                self.saw_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.saw_cr = true;
                    self.line(&mut out);
                }
                b'\n' => self.line(&mut out),
                _ => self.buf.push(b),
            }
        }
        out
    }

    /// Bytes still waiting for an end of line.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Call at end of stream: an unterminated event is dispatched as the spec
    /// says it is not (we keep it, since a conformance tool wants to show it).
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            self.line(&mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn line(&mut self, out: &mut Vec<Event>) {
        let line = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            self.comments += 1;
            return;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_str(), ""),
        };
        match field {
            "data" => self.data.push(value.to_string()),
            "event" => self.event = Some(value.to_string()),
            "id" => self.id = Some(value.to_string()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        if self.data.is_empty() {
            if self.event.is_some() || self.id.is_some() {
                self.empty_events += 1;
            }
            self.event = None;
            self.id = None;
            return;
        }
        let data = self.data.join("\n");
        self.data.clear();
        if data.is_empty() {
            self.empty_events += 1;
            self.event = None;
            self.id = None;
            return;
        }
        out.push(Event { event: self.event.take(), id: self.id.take(), data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_comments_and_split_chunks() {
        let mut p = Parser::new();
        let mut ev = p.feed(b"id: 1\ndata:\nretry: 100\n\n: keepalive\n");
        assert!(ev.is_empty());
        assert_eq!(p.empty_events, 1);
        assert_eq!(p.comments, 1);
        ev.extend(p.feed(b"event: message\r\ndata: {\"a\":"));
        ev.extend(p.feed(b"1}\r\n\r\n"));
        assert_eq!(ev, vec![Event { event: Some("message".into()), id: None, data: "{\"a\":1}".into() }]);
    }

    #[test]
    fn multi_line_data_is_joined() {
        let mut p = Parser::new();
        let ev = p.feed(b"data: a\ndata: b\n\n");
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn unterminated_event_is_kept_at_finish() {
        let mut p = Parser::new();
        assert!(p.feed(b"data: x").is_empty());
        assert_eq!(p.finish()[0].data, "x");
    }
}
