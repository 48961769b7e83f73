//! Multi-op templates (softmax, norms, attention, ...) built with the
//! [`ModuleBuilder`], each with named stages and fusion configurations that
//! group the stages into fusions the way a compiler's autotuner would.

use crate::hlo::{BuildError, ElementType, FusionKind, Module};

use super::fusion::{apply_configuration, FusionGroup, OutlineError};

mod builders;

use builders::{
    attention, conv_bias_relu, embedding_segment_sum, gelu_erf, gelu_tanh, layernorm,
    matmul_bias_relu, mean_variance, quantize, residual_chain, rmsnorm, softmax, topk,
};

use ElementType::{Bf16, F8E4M3Fn, F16, F32, F8E5M2};
use FusionKind::{Input, Loop, Output};

/// A fusion configuration: named groups of stages, each outlined into one fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Configuration {
    /// The configuration's name in case ids (`unfused`, `all-in-one`, ...).
    pub name: &'static str,
    /// Each group: its fusion kind and the stages it holds (`*` means every stage).
    pub groups: &'static [(FusionKind, &'static [&'static str])],
}

pub(crate) const UNFUSED: Configuration = Configuration {
    name: "unfused",
    groups: &[],
};

/// A table `$table` of templates that are only ever unfused, one per name,
/// each on `$dtypes` and built by `$build(name, dtype, dims)`.
macro_rules! unfused_templates {
    ($(#[$doc:meta])* $table:ident, $dtypes:ident, $build:ident: $($name:literal),* $(,)?) => {
        $(#[$doc])*
        pub const $table: &[$crate::programs::templates::ProgramTemplate] = &[
            $($crate::programs::templates::ProgramTemplate {
                name: $name,
                dtypes: $dtypes,
                configurations: &[$crate::programs::templates::UNFUSED],
                build: |t, d| $build($name, t, d),
            },)*
        ];
    };
}
pub(crate) use unfused_templates;

const fn all_in_one(kind: FusionKind) -> Configuration {
    Configuration {
        name: "all-in-one",
        groups: match kind {
            Loop => &[(Loop, &["*"])],
            Input => &[(Input, &["*"])],
            _ => &[(Output, &["*"])],
        },
    }
}

/// A built template: its module and which entry instructions belong to which stage.
#[derive(Clone, Debug)]
pub struct StagedModule {
    /// The unfused module.
    pub module: Module,
    /// Stage name and the names of its instructions, in stage order.
    pub stages: Vec<(&'static str, Vec<String>)>,
}

impl StagedModule {
    /// The module `text` parses to, without stages; a parse error is
    /// `computation`'s, with the text.
    pub(crate) fn parsed(computation: String, text: String) -> Result<StagedModule, BuildError> {
        let module = crate::hlo::parse_module(&text).map_err(|e| BuildError::Invalid {
            computation,
            message: format!("{e}\n{text}"),
        })?;
        Ok(StagedModule {
            module,
            stages: Vec::new(),
        })
    }
}

type Dims = [i64; 2];
pub(crate) type BuildFn = fn(ElementType, Dims) -> Result<StagedModule, BuildError>;

/// A program template: how to build it, over which dtypes, and its fusion configurations.
#[derive(Clone, Copy, Debug)]
pub struct ProgramTemplate {
    /// The template name (`softmax`, `attention`, ...).
    pub name: &'static str,
    /// The dtypes it is built for (narrow floats compute natively and accumulate in f32).
    pub dtypes: &'static [ElementType],
    /// Its fusion configurations (the first is always `unfused`).
    pub configurations: &'static [Configuration],
    pub(crate) build: BuildFn,
}

const FLOATS: &[ElementType] = &[F32, F16, Bf16];
const NARROW: &[ElementType] = &[F16, Bf16, F8E4M3Fn, F8E5M2];

/// Every template.
pub const TEMPLATES: &[ProgramTemplate] = &[
    ProgramTemplate {
        name: "softmax",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Input),
            Configuration {
                name: "max-exp.sum-div",
                groups: &[(Input, &["max", "exp"]), (Input, &["sum", "div"])],
            },
            Configuration {
                name: "exp-sum",
                groups: &[(Input, &["exp", "sum"])],
            },
        ],
        build: softmax,
    },
    ProgramTemplate {
        name: "layernorm",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Input),
            Configuration {
                name: "stats.scale",
                groups: &[(Input, &["mean", "center", "var"]), (Loop, &["scale"])],
            },
        ],
        build: layernorm,
    },
    ProgramTemplate {
        name: "rmsnorm",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Input),
            Configuration {
                name: "sumsq.scale",
                groups: &[(Input, &["sumsq"]), (Loop, &["scale"])],
            },
        ],
        build: rmsnorm,
    },
    ProgramTemplate {
        name: "gelu-tanh",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "inner.tanh-out",
                groups: &[(Loop, &["inner"]), (Loop, &["tanh", "out"])],
            },
        ],
        build: gelu_tanh,
    },
    ProgramTemplate {
        name: "gelu-erf",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "erf.out",
                groups: &[(Loop, &["erf"]), (Loop, &["out"])],
            },
        ],
        build: gelu_erf,
    },
    ProgramTemplate {
        name: "attention",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Output),
            Configuration {
                name: "scores-mask.softmax.out",
                groups: &[
                    (Output, &["scores", "mask"]),
                    (Input, &["softmax"]),
                    (Output, &["out"]),
                ],
            },
            Configuration {
                name: "mask-softmax",
                groups: &[(Input, &["mask", "softmax"])],
            },
        ],
        build: attention,
    },
    ProgramTemplate {
        name: "matmul-bias-relu",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Output),
            Configuration {
                name: "dot-bias.act",
                groups: &[(Output, &["dot", "bias"]), (Loop, &["act"])],
            },
            Configuration {
                name: "bias-act",
                groups: &[(Loop, &["bias", "act"])],
            },
        ],
        build: matmul_bias_relu,
    },
    ProgramTemplate {
        name: "quantize",
        dtypes: NARROW,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "q.dq-residual",
                groups: &[(Loop, &["quantize"]), (Loop, &["dequantize", "residual"])],
            },
        ],
        build: quantize,
    },
    ProgramTemplate {
        name: "embedding-segment-sum",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "gather-scale.scatter",
                groups: &[(Loop, &["gather", "scale"]), (Loop, &["scatter"])],
            },
        ],
        build: embedding_segment_sum,
    },
    ProgramTemplate {
        name: "topk",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "sort.slice",
                groups: &[(Loop, &["sort"]), (Loop, &["slice"])],
            },
        ],
        build: topk,
    },
    ProgramTemplate {
        name: "mean-variance",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Input),
            Configuration {
                name: "mean.var",
                groups: &[(Input, &["mean"]), (Input, &["var"])],
            },
        ],
        build: mean_variance,
    },
    ProgramTemplate {
        name: "residual-chain",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Loop),
            Configuration {
                name: "add1-add2.add3",
                groups: &[(Loop, &["add1", "add2"]), (Loop, &["add3"])],
            },
        ],
        build: residual_chain,
    },
    ProgramTemplate {
        name: "conv-bias-relu",
        dtypes: FLOATS,
        configurations: &[
            UNFUSED,
            all_in_one(Output),
            Configuration {
                name: "conv.bias-relu",
                groups: &[(Output, &["conv"]), (Loop, &["bias", "relu"])],
            },
        ],
        build: conv_bias_relu,
    },
];

/// The shapes templates are built at: `[rows, columns]` (each template reads them its way).
pub const TEMPLATE_SHAPES: &[&[i64]] = &[&[2, 8], &[4, 16], &[3, 33]];

/// Why a template program could not be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TemplateError {
    /// The template does not take this dtype.
    #[error("template `{template}` is not built for {dtype}")]
    Dtype {
        /// The template.
        template: &'static str,
        /// The dtype.
        dtype: ElementType,
    },
    /// No configuration of this name.
    #[error("template `{template}` has no configuration `{configuration}`")]
    Configuration {
        /// The template.
        template: &'static str,
        /// The configuration.
        configuration: String,
    },
    /// The shape is not `[rows, columns]` with both positive.
    #[error("template shapes are [rows, columns] with both positive, got {0:?}")]
    Shape(Vec<i64>),
    /// The builder rejected the template (a bug in the template).
    #[error("template `{template}`: {source}")]
    Build {
        /// The template.
        template: &'static str,
        /// Why.
        source: BuildError,
    },
    /// A configuration's groups could not be outlined (a bug in the configuration).
    #[error("template `{template}` configuration `{configuration}`: {source}")]
    Outline {
        /// The template.
        template: &'static str,
        /// The configuration.
        configuration: &'static str,
        /// Why.
        source: OutlineError,
    },
}

impl ProgramTemplate {
    /// Builds the unfused program with its stages.
    pub fn staged(&self, dtype: ElementType, dims: &[i64]) -> Result<StagedModule, TemplateError> {
        if !self.dtypes.contains(&dtype) {
            return Err(TemplateError::Dtype {
                template: self.name,
                dtype,
            });
        }
        let d = match dims {
            [r, c] if *r > 0 && *c > 0 => [*r, *c],
            _ => return Err(TemplateError::Shape(dims.to_vec())),
        };
        (self.build)(dtype, d).map_err(|source| TemplateError::Build {
            template: self.name,
            source,
        })
    }

    /// The configuration with this name.
    pub fn configuration(&self, name: &str) -> Option<&'static Configuration> {
        self.configurations.iter().find(|c| c.name == name)
    }

    /// Builds the program under a named fusion configuration.
    ///
    /// ```
    /// use xla_props::hlo::{ElementType, Opcode};
    /// use xla_props::programs::find_template;
    /// let t = find_template("softmax").unwrap();
    /// let m = t.build(ElementType::F32, &[2, 8], "all-in-one").unwrap();
    /// let entry = m.entry_computation();
    /// assert_eq!(entry.instr(entry.root).opcode, Opcode::Fusion);
    /// let r = xla_props::reference::evaluate(&m, &[xla_props::literal::Literal::zeros(
    ///     m.parameter_shapes()[0].as_array().unwrap()).unwrap()]).unwrap();
    /// assert!((r[0].get_f64(0) - 0.125).abs() < 1e-7);
    /// ```
    pub fn build(
        &self,
        dtype: ElementType,
        dims: &[i64],
        configuration: &str,
    ) -> Result<Module, TemplateError> {
        let config =
            *self
                .configuration(configuration)
                .ok_or_else(|| TemplateError::Configuration {
                    template: self.name,
                    configuration: configuration.to_string(),
                })?;
        let staged = self.staged(dtype, dims)?;
        let groups: Vec<FusionGroup> = config
            .groups
            .iter()
            .map(|(kind, stages)| FusionGroup {
                kind: *kind,
                members: staged
                    .stages
                    .iter()
                    .filter(|(s, _)| stages.contains(&"*") || stages.contains(s))
                    .flat_map(|(_, names)| names.iter().cloned())
                    .collect(),
            })
            .collect();
        apply_configuration(&staged.module, &groups).map_err(|source| TemplateError::Outline {
            template: self.name,
            configuration: config.name,
            source,
        })
    }
}

/// How many entries top-k keeps per row.
pub fn topk_k(columns: i64) -> i64 {
    columns.min(4)
}

/// Every (template, configuration) name pair built for `dtype`, as `template.configuration`.
pub fn template_cases(dtype: ElementType) -> Vec<String> {
    TEMPLATES
        .iter()
        .filter(|t| t.dtypes.contains(&dtype))
        .flat_map(|t| {
            t.configurations
                .iter()
                .map(move |c| format!("{}.{}", t.name, c.name))
        })
        .collect()
}

#[cfg(test)]
mod tests;
