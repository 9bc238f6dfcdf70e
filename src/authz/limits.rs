//! authz::limits: how deep and how long a policy may be (P5). Cedar's parser, validator and
//! evaluator recurse once per nesting level and once per operand of a chain of `||` / `&&`, so
//! a policy can be valid and still overflow a thread's stack: a 3,000-way `||` list killed a
//! reload on a runtime worker, 700 nested parentheses `validate` itself. Every source is scanned
//! before Cedar sees it, and a policy past a limit is a load problem naming its file and line,
//! the same for `validate`, `diff`, `serve` and every reload. Sets are then built on a thread
//! with a stack of its own ([`on_build_stack`]), so what passes the limits builds the same on
//! any thread. Text only: it parses nothing else and reads no files.

use super::problem::LoadProblem;

/// The deepest nesting of `(`, `[` and `{` in one policy.
pub const MAX_NESTING: usize = 48;
/// The most `||` and `&&` operators in one policy (a long list belongs in a set literal).
pub const MAX_BOOLEAN_OPERATORS: usize = 500;
/// The largest policy file, in bytes.
pub const MAX_SOURCE_BYTES: usize = 4 << 20;
/// The stack of the thread that builds a policy set: far more than a policy within the limits
/// needs.
pub const BUILD_STACK_BYTES: usize = 64 << 20;
/// The stack of `serve`'s runtime workers, which evaluate policies: Cedar's evaluator errors
/// (fail closed) when under 100 KiB is left, and with tokio's default 2 MiB a chain of 500
/// `||` already did.
pub const WORKER_STACK_BYTES: usize = 8 << 20;

/// The problems of `text` (named `file`) against the limits; empty when it is within them.
pub fn check(file: &str, text: &str) -> Vec<LoadProblem> {
    if text.len() > MAX_SOURCE_BYTES {
        return vec![LoadProblem::in_file(
            file,
            None,
            format!(
                "the file is {} bytes: at most {MAX_SOURCE_BYTES} bytes of policies per file",
                text.len()
            ),
        )];
    }
    let mut problems = Vec::new();
    let mut scan = Scan::new(text);
    while let Some(policy) = scan.next_policy() {
        if policy.deepest > MAX_NESTING {
            problems.push(LoadProblem::in_file(
                file,
                Some(policy.line),
                format!(
                    "the policy nests brackets {} deep: at most {MAX_NESTING} (askgate refuses deeper policies rather than risk its stack)",
                    policy.deepest
                ),
            ));
        }
        if policy.operators > MAX_BOOLEAN_OPERATORS {
            problems.push(LoadProblem::in_file(
                file,
                Some(policy.line),
                format!(
                    "the policy has {} `||` / `&&` operators: at most {MAX_BOOLEAN_OPERATORS}; write a long list of values as a set, e.g. `[\"a.html\", \"b.html\"].contains(context.lowercase)`",
                    policy.operators
                ),
            ));
        }
    }
    problems
}

/// Runs `build` on a thread with [`BUILD_STACK_BYTES`] of stack, so building a policy set does
/// not depend on the stack of the thread that asks (a runtime worker has 2 MiB). When no thread
/// can be started it runs on the caller's.
pub fn on_build_stack<T: Send>(build: impl FnOnce() -> T + Send) -> T {
    let mut build = Some(build);
    let mut result = None;
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("askgate-policy-build".to_string())
            .stack_size(BUILD_STACK_BYTES)
            .spawn_scoped(scope, || build.take().map(|build| build()));
        if let Ok(handle) = spawned {
            result = handle.join().ok().flatten();
        }
    });
    match (result, build) {
        (Some(result), _) => result,
        (None, Some(build)) => build(),
        // The thread ran `build` and panicked: resume it here (it is not ours to swallow).
        (None, None) => on_caller_after_panic(),
    }
}

#[allow(clippy::panic)]
fn on_caller_after_panic<T>() -> T {
    panic!("building the policy set panicked")
}

/// One policy's extent as the scan saw it.
struct Policy {
    line: usize,
    deepest: usize,
    operators: usize,
}

/// A scan of Cedar text by policy (`;` outside brackets, strings and comments ends one).
struct Scan<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            chars: text.chars().peekable(),
            line: 1,
        }
    }

    fn next_policy(&mut self) -> Option<Policy> {
        let mut policy: Option<Policy> = None;
        let mut depth = 0usize;
        while let Some(c) = self.chars.next() {
            match c {
                '\n' => {
                    self.line += 1;
                    continue;
                }
                c if c.is_whitespace() => continue,
                '/' if self.chars.peek() == Some(&'/') => {
                    self.skip_comment();
                    continue;
                }
                _ => {}
            }
            let line = self.line;
            let current = policy.get_or_insert(Policy {
                line,
                deepest: 0,
                operators: 0,
            });
            match c {
                '"' => self.skip_string(),
                '(' | '[' | '{' => {
                    depth += 1;
                    current.deepest = current.deepest.max(depth);
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                '|' | '&' if self.chars.peek() == Some(&c) => {
                    self.chars.next();
                    current.operators += 1;
                }
                ';' if depth == 0 => return policy,
                _ => {}
            }
        }
        policy
    }

    fn skip_comment(&mut self) {
        for c in self.chars.by_ref() {
            if c == '\n' {
                self.line += 1;
                return;
            }
        }
    }

    fn skip_string(&mut self) {
        while let Some(c) = self.chars.next() {
            match c {
                '\\' => {
                    self.chars.next();
                }
                '"' => return,
                '\n' => self.line += 1,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> String {
        let terms: Vec<String> = (0..n)
            .map(|i| format!("context.lowercase == \"f{i}.html\""))
            .collect();
        format!(
            "@id(\"l\")\n@reason(\"x\")\nforbid (principal, action, resource)\nwhen {{ {} }};\n",
            terms.join(" || ")
        )
    }

    fn nested(n: usize) -> String {
        format!(
            "// a comment with ((( and \"\n@id(\"n\")\n@reason(\"x ((\")\nforbid (principal, action, resource)\nwhen {{ {}true{} }};\n",
            "(".repeat(n),
            ")".repeat(n)
        )
    }

    #[test]
    fn p5_long_chains_and_deep_nesting_are_problems_with_their_line() {
        assert!(check("l.cedar", &chain(MAX_BOOLEAN_OPERATORS + 1)).is_empty());
        let long = check("l.cedar", &chain(3_000));
        assert_eq!(long.len(), 1, "{long:?}");
        assert_eq!(long[0].line, Some(1));
        assert!(
            long[0].message.contains("2999 `||` / `&&` operators"),
            "{}",
            long[0].message
        );
        let deep = check("n.cedar", &format!("{}{}", chain(2), nested(1_000)));
        assert_eq!(deep.len(), 1, "{deep:?}");
        assert_eq!(deep[0].line, Some(6), "the second policy starts on line 6");
        assert!(check("n.cedar", &nested(MAX_NESTING - 1)).is_empty());
    }

    #[test]
    fn strings_and_comments_do_not_count() {
        let text = "// ;;; ((( ||\n@id(\"a\") @reason(\"(((;|| &&\") permit (principal, action, resource);";
        assert!(check("a.cedar", text).is_empty());
    }

    #[test]
    fn a_build_runs_on_its_own_stack() {
        let name = on_build_stack(|| std::thread::current().name().map(str::to_string));
        assert_eq!(name.as_deref(), Some("askgate-policy-build"));
    }
}
