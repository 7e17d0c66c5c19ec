//! `launch-econ predict`: the round model applied to a saved measurement. Needs no GPU.

use crate::commands::{check_outputs, deliver, UsageError};
use crate::document::{
    CommandResult, Document, ModelProfile, PredictResult, DEFAULT_PROFILE, DEFAULT_PROFILE_NAME,
};
use crate::model::{predict, Round};
use crate::options::{ExportArgs, PredictArgs};
use crate::report::prediction_text;
use crate::seed::saving_line;

pub fn run(args: &PredictArgs, argv: &[String]) -> anyhow::Result<()> {
    let export = ExportArgs {
        export_json: args.export_json.clone(),
        ..ExportArgs::default()
    };
    check_outputs(&export, &[])?;
    let (source, origin) = match &args.profile {
        Some(p) => (
            ModelProfile::load(p).map_err(|e| UsageError(format!("{e:#}")))?,
            p.display().to_string(),
        ),
        None => (
            ModelProfile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME)?,
            format!("{DEFAULT_PROFILE_NAME} (shipped with launch-econ)"),
        ),
    };
    let inputs = source.model_inputs;
    let round = Round {
        launches: args.round.round_launches,
        host_issue_ms: args.round.round_host_issue_ms,
        gpu_ms: args.round.round_gpu_ms,
    };
    let p = predict(&inputs, &round);
    let device = source
        .device
        .as_ref()
        .map_or("unknown device".into(), |d| d.name.clone());
    let mut report = format!(
        "{}\nprofile: {origin}, measured on {device}\n",
        saving_line(&round, p.saving_ms)
    );
    report.push_str(&prediction_text(&inputs, &round, &p));
    let doc = Document::new(
        argv,
        source.device.clone(),
        CommandResult::Predict(PredictResult {
            profile: origin,
            model_inputs: inputs,
            round,
            prediction: p,
        }),
    );
    deliver(&doc, &report, &export)
}
