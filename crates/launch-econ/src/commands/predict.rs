//! `launch-econ predict`: the round model applied to a saved measurement. Needs no GPU.

use crate::commands::{check_outputs, UsageError};
use crate::export::{write_all, JsonExporter, Target};
use crate::model::{predict, Round};
use crate::options::{ExportArgs, PredictArgs};
use crate::profile::{Profile, DEFAULT_PROFILE, DEFAULT_PROFILE_NAME};
use crate::report::prediction_text;
use crate::seed::saving_line;

pub fn run(args: &PredictArgs) -> anyhow::Result<()> {
    let export = ExportArgs {
        export_json: args.export_json.clone(),
        ..ExportArgs::default()
    };
    check_outputs(&export, &[])?;
    let (source, origin) = match &args.profile {
        Some(p) => (
            Profile::load(p).map_err(|e| UsageError(format!("{e:#}")))?,
            p.display().to_string(),
        ),
        None => (
            Profile::parse(DEFAULT_PROFILE, DEFAULT_PROFILE_NAME)?,
            format!("{DEFAULT_PROFILE_NAME} (shipped with launch-econ)"),
        ),
    };
    let inputs = source
        .require_model_inputs(&origin)
        .map_err(|e| UsageError(format!("{e:#}")))?;
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
    println!("{}", saving_line(&round, p.saving_ms));
    println!("profile: {origin}, measured on {device}");
    print!("{}", prediction_text(&inputs, &round, &p));
    let mut doc = Profile::new("predict", source.device.clone());
    doc.model_inputs = Some(inputs);
    doc.round = Some(round);
    doc.prediction = Some(p);
    if let Some(path) = &args.export_json {
        let target = if path.as_os_str() == "-" {
            Target::Stdout
        } else {
            Target::File(path.clone())
        };
        write_all(&doc, &[(Box::new(JsonExporter), target)])?;
    }
    Ok(())
}
