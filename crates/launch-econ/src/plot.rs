//! The sweep chart: µs per launch against launch count, eager versus graph replay versus the
//! raw driver floor, one set of lines per kernel size. SVG, so no font or display is needed.

use std::path::Path;

use anyhow::{anyhow, Context};
use plotters::prelude::*;

use crate::document::{Device, Document, SweepResult};
use crate::measure::RunFigure;

/// (label, figure, colour) of each drawn series.
const SERIES: &[(&str, RunFigure, RGBColor)] = &[
    ("eager wall", RunFigure::EagerWallUs, RGBColor(214, 39, 40)),
    (
        "driver floor wall",
        RunFigure::FloorWallUs,
        RGBColor(127, 127, 127),
    ),
    (
        "graph replay wall",
        RunFigure::GraphWallUs,
        RGBColor(31, 119, 180),
    ),
];

/// Renders the chart to an SVG string.
pub fn render_svg(device: Option<&Device>, sweep: &SweepResult) -> anyhow::Result<String> {
    let points = &sweep.points;
    let mut sizes: Vec<usize> = points.iter().map(|p| p.config.elems).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let xs = points.iter().map(|p| p.config.launches as f64);
    let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ymax = points
        .iter()
        .flat_map(|p| SERIES.iter().map(move |(_, f, _)| p.median(*f)))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    if points.is_empty() || !ymax.is_finite() {
        return Err(anyhow!("nothing to plot: the sweep has no points"));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = match device {
            Some(d) => format!("launch cost on {} (median of trials)", d.name),
            None => "launch cost (median of trials)".into(),
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (xmin.max(1.0)..(xmax * 1.2).max(2.0)).log_scale(),
                0.0..ymax * 1.15,
            )?;
        chart
            .configure_mesh()
            .x_desc("launches per round (log scale)")
            .y_desc("µs per launch (wall)")
            .draw()?;
        for (si, &size) in sizes.iter().enumerate() {
            for (label, figure, color) in SERIES {
                let mut pts: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|p| p.config.elems == size)
                    .map(|p| (p.config.launches as f64, p.median(*figure)))
                    .filter(|(_, y)| y.is_finite())
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let width = 1 + (sizes.len() - si) as u32;
                let style = color.stroke_width(width);
                chart
                    .draw_series(LineSeries::new(pts.clone(), style))?
                    .label(format!("{label}, {size} elems"))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(width))
                    });
                chart.draw_series(
                    pts.iter()
                        .map(|&(x, y)| Circle::new((x, y), 2 + si as i32, color.filled())),
                )?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

/// Renders and writes the chart atomically.
pub fn write_svg(doc: &Document, sweep: &SweepResult, path: &Path) -> anyhow::Result<()> {
    let svg = render_svg(doc.device.as_ref(), sweep).context("drawing the chart")?;
    crate::export::write_atomically(path, svg.as_bytes())?;
    eprintln!("wrote chart to {}", path.display());
    Ok(())
}
