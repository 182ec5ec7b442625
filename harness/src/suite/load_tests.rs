//! Tests of suite loading: the built-in catalogue, and the errors a
//! malformed suite file gets (file and JSON path named).

use super::*;

#[test]
fn builtin_list_matches_the_suites_folder_and_loads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
    let from_dir = load_dir(&dir).expect("suites folder loads");
    let builtin = load_builtin().expect("built-in suites load");
    assert_eq!(from_dir.files, builtin.files, "suite::BUILTIN must list every file under suites/");
    assert_eq!(from_dir.digest, builtin.digest);
    assert!(builtin.cases.len() >= 30);
}

#[test]
fn an_era_loads_exactly_the_cases_of_its_revisions_with_the_same_digest() {
    let all = load_builtin().expect("built-in suites load");
    for era in [Era::Stateless, Era::Initialize] {
        let part = load_builtin_era(era).expect("an era's suites load");
        assert_eq!((&part.digest, &part.files), (&all.digest, &all.files), "{era:?}: the digest and file list are the whole catalogue's");
        let want: Vec<&str> = all.cases.iter().filter(|c| c.revision.era() == era).map(|c| c.id.as_str()).collect();
        let got: Vec<&str> = part.cases.iter().map(|c| c.id.as_str()).collect();
        assert!(!got.is_empty());
        assert_eq!(got, want, "{era:?}: the same cases, in the same order");
    }
}

fn one_case(step: &str, expect: &str) -> String {
    format!(
        r#"{{"format":1,"revision":"2026-07-28","area":"a","title":"t","cases":[{{"id":"2026-07-28/a/b","title":"t","level":"MUST","spec":{{"document":"d","anchor":"x"}},"basis":{{"quote":"q","source":"s","keyword":"MUST"}},"steps":[{step}],"expect":[{expect}]}}]}}"#
    )
}

#[test]
fn a_typo_is_an_error_naming_file_and_path() {
    let v = format_validator();
    let bad = one_case(r#"{"send":{"method":"m"}}"#, r#"{"eror":-32601}"#);
    let e = parse_file("2026-07-28/x.json", &bad, Some(&v)).unwrap_err();
    assert_eq!(e.file, "2026-07-28/x.json");
    assert!(e.path.starts_with("/cases/0/expect/0"), "{e}");
    let unknown_type = one_case(r#"{"send":{"method":"m"}}"#, r#"{"result":"NoSuchType"}"#);
    let e = parse_file("f", &unknown_type, Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/expect/0/result");
}

#[test]
fn actions_are_resolved_with_typed_arguments_at_load() {
    let v = format_validator();
    let ok = one_case(r#"{"action":"tools_admission","with":{"rule":"name"}}"#, "");
    assert!(parse_file("f", &ok, Some(&v)).is_ok());
    let e = parse_file("f", &one_case(r#"{"action":"tools_admission","with":{"rul":"name"}}"#, ""), Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/steps/0/with", "{e}");
    assert!(e.problem.contains("unknown field `rul`"), "{e}");
    let e = parse_file("f", &one_case(r#"{"action":"tools_admission","with":{"rule":"nmae"}}"#, ""), Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/steps/0/with", "{e}");
    let e = parse_file("f", &one_case(r#"{"action":"tools_admision","with":{"rule":"name"}}"#, ""), Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/steps/0/action", "{e}");
    // A check for one transport must say so in `applies`.
    let e = parse_file("f", &one_case(r#"{"action":"exit_on_stdin_eof"}"#, ""), Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/applies/transports", "{e}");
    // A check of 2026-07-28 rules in a 2025-11-25 file.
    let legacy = one_case(r#"{"action":"no_server_requests"}"#, "").replace("2026-07-28", "2025-11-25");
    let e = parse_file("f", &legacy, Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/steps/0/action", "{e}");
}

#[test]
fn from_probe_stands_for_the_probes_initialize_only() {
    let v = format_validator();
    let legacy = |step: &str| one_case(step, "").replace("2026-07-28", "2025-11-25");
    assert!(parse_file("f", &legacy(r#"{"send":{"method":"initialize","from_probe":true}}"#), Some(&v)).is_ok());
    for step in [
        r#"{"send":{"method":"ping","from_probe":true}}"#,
        r#"{"send":{"method":"initialize","from_probe":true,"fresh":true}}"#,
        r#"{"send":{"method":"initialize","from_probe":true,"params":{"protocolVersion":"1900-01-01"}}}"#,
        r#"{"send":{"method":"initialize","from_probe":true,"session":"none"}}"#,
    ] {
        let e = parse_file("f", &legacy(step), Some(&v)).unwrap_err();
        assert_eq!(e.path, "/cases/0/steps/0/send/from_probe", "{step}: {e}");
    }
    // 2026-07-28 has no initialize handshake to stand for.
    let e = parse_file("f", &one_case(r#"{"send":{"method":"initialize","from_probe":true}}"#, ""), Some(&v)).unwrap_err();
    assert_eq!(e.path, "/cases/0/steps/0/send/from_probe", "{e}");
}

#[test]
fn a_level_stronger_than_its_sentence_is_refused() {
    let v = format_validator();
    let case = |level: &str, keyword: &str| {
        one_case(r#"{"send":{"method":"m"}}"#, "")
            .replace(r#""level":"MUST""#, &format!(r#""level":"{level}""#))
            .replace(r#""keyword":"MUST""#, &format!(r#""keyword":"{keyword}""#))
    };
    assert!(parse_file("f", &case("MUST", "MUST"), Some(&v)).is_ok());
    assert!(parse_file("f", &case("SHOULD", "MUST"), Some(&v)).is_ok(), "weaker than the sentence is allowed");
    assert!(parse_file("f", &case("MUST", "none"), Some(&v)).is_ok(), "described behaviour");
    assert!(parse_file("f", &case("POLICY", "silent"), Some(&v)).is_ok());
    for (level, keyword) in [("MUST", "SHOULD"), ("MUST NOT", "SHOULD NOT"), ("SHOULD", "silent"), ("MUST", "MAY")] {
        let e = parse_file("f", &case(level, keyword), Some(&v)).unwrap_err();
        assert_eq!(e.path, "/cases/0/basis/keyword", "{level}/{keyword}: {e}");
    }
}

#[test]
fn the_schema_names_exactly_the_registered_actions() {
    let schema: Value = serde_json::from_str(FORMAT_SCHEMA).unwrap();
    let mut in_schema: Vec<&str> = schema
        .pointer("/$defs/step/properties/action/enum")
        .and_then(|e| e.as_array())
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let mut registered: Vec<&str> = checks::REGISTRY.iter().map(|e| e.name).collect();
    in_schema.sort();
    registered.sort();
    assert_eq!(in_schema, registered, "suites/suite.schema.json and checks::REGISTRY must name the same actions");
}
