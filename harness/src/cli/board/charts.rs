//! The index's pictures, as SVG made when the site is written (no script,
//! nothing fetched): bars of labelled values, each with its number.

use maud::{Markup, html};

/// One bar: its label, its value, its colour, and the text it shows.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub color: &'static str,
    pub text: String,
}

/// Horizontal bars, scaled to `max` (the largest value when None).
pub fn bars(title: &str, bars: &[Bar], max: Option<f64>) -> Markup {
    let max = max.unwrap_or_else(|| bars.iter().map(|b| b.value).fold(0.0, f64::max)).max(1e-9);
    let (label_w, bar_w, row_h) = (170.0, 220.0, 18.0);
    let height = 24.0 + row_h * bars.len() as f64;
    html! {
        figure.chart {
            svg xmlns="http://www.w3.org/2000/svg" width=(label_w + bar_w + 230.0) height=(height) role="img" aria-label=(title) {
                title { (title) }
                text x="0" y="14" font-weight="bold" font-size="12" { (title) }
                @for (i, b) in bars.iter().enumerate() {
                    @let y = 24.0 + row_h * i as f64;
                    text x=(label_w - 6.0) y=(y + 12.0) text-anchor="end" font-size="11" { (clip(&b.label, 26)) }
                    rect x=(label_w) y=(y + 2.0) width=((b.value / max * bar_w).max(1.0)) height=(row_h - 5.0) fill=(b.color) {
                        title { (b.label) ": " (b.text) }
                    }
                    text x=(label_w + (b.value / max * bar_w).max(1.0) + 4.0) y=(y + 12.0) font-size="11" { (b.text) }
                }
            }
        }
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n - 1).collect::<String>()) }
}

/// A pass rate as a bar: green from 90 %, amber from 50 %, else red.
pub fn rate(label: String, passed: usize, of: usize) -> Bar {
    let v = if of == 0 { 0.0 } else { passed as f64 / of as f64 };
    let color = if v >= 0.9 {
        "#2e7d32"
    } else if v >= 0.5 {
        "#b26a00"
    } else {
        "#c62828"
    };
    Bar { label, value: v, color, text: format!("{:.0} % ({passed} of {of})", v * 100.0) }
}
