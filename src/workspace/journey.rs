//! Where the user is on the path from "what I sell" to a running campaign (PRODUCT §8), and
//! what comes next. Pure: it works on [`Progress`], the facts each area reports.

use schemars::JsonSchema;
use serde::Serialize;

/// One step of the journey, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// What the user sells.
    Offer,
    /// The ideal customer, in words, as filters, confirmed.
    Target,
    /// How many leads match, and a sample.
    LeadPool,
    /// Playbook and sequence, approved by the user.
    Sequence,
    /// The first email, rendered and checked.
    FirstEmail,
    /// Volume → mailboxes → domains.
    Sizing,
    /// Already-warmed addresses or the user's brand.
    SendingSource,
    /// Domains and mailbox names.
    Domains,
    /// The setup ordered (an approval).
    Setup,
    /// Mailboxes warmed up.
    Warmup,
    /// Leads imported (an approval).
    Leads,
    /// Campaign staged and launched (an approval).
    Campaign,
    /// Replies read.
    Replies,
}

impl Step {
    /// Every step, in journey order.
    pub const ALL: [Step; 13] = [
        Step::Offer,
        Step::Target,
        Step::LeadPool,
        Step::Sequence,
        Step::FirstEmail,
        Step::Sizing,
        Step::SendingSource,
        Step::Domains,
        Step::Setup,
        Step::Warmup,
        Step::Leads,
        Step::Campaign,
        Step::Replies,
    ];

    /// What the step is, for people.
    pub fn title(self) -> &'static str {
        match self {
            Step::Offer => "Describe what you sell",
            Step::Target => "Define the ideal customer",
            Step::LeadPool => "Size the lead pool",
            Step::Sequence => "Write and approve the emails",
            Step::FirstEmail => "Check the first email",
            Step::Sizing => "Size the sending capacity",
            Step::SendingSource => "Choose the sending addresses",
            Step::Domains => "Pick domains and mailboxes",
            Step::Setup => "Order the sending setup",
            Step::Warmup => "Warm up the mailboxes",
            Step::Leads => "Import the leads",
            Step::Campaign => "Stage and launch the campaign",
            Step::Replies => "Read the replies",
        }
    }

    /// The tools that move this step forward, the first being where to start.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            Step::Offer => &["save_offer"],
            Step::Target => &["save_target", "save_target_filters", "confirm_target"],
            Step::LeadPool => &["estimate_lead_pool", "preview_lead_sample"],
            Step::Sequence => &["save_playbook", "save_sequence", "approve_sequence"],
            Step::FirstEmail => &["check_first_email"],
            Step::Sizing => &["size_sending_capacity", "confirm_sizing"],
            Step::SendingSource => &["choose_sending_source"],
            Step::Domains => &["propose_domains", "propose_warmed_domains", "propose_email"],
            Step::Setup => &["order_sending_setup", "get_sending_setup"],
            Step::Warmup => &["start_warmup", "get_sending_setup"],
            Step::Leads => &["import_leads"],
            Step::Campaign => &["stage_campaign", "estimate_campaign_plan", "launch_campaign"],
            Step::Replies => &["list_replies", "get_campaign"],
        }
    }

    /// Why the step matters, said to the model when it is next.
    fn why(self) -> &'static str {
        match self {
            Step::Offer => "Everything else (targeting, emails, estimates) is built from the offer.",
            Step::Target => "The target decides which people are searched and what the emails say.",
            Step::LeadPool => {
                "Counting and sampling the matching people shows whether the target is worth a campaign."
            }
            Step::Sequence => "The emails must be written and approved by the user before anything is sent.",
            Step::FirstEmail => {
                "Checking the first email as a prospect will see it catches mistakes before they go out."
            }
            Step::Sizing => "The wanted volume decides how many mailboxes and domains are needed.",
            Step::SendingSource => {
                "Sending addresses are either ready now or created under the user's brand."
            }
            Step::Domains => "The domains and mailbox names are what prospects will see.",
            Step::Setup => {
                "Buying domains and creating mailboxes costs money, so it is an approval the user decides."
            }
            Step::Warmup => "New mailboxes must warm up before cold emails, or they land in spam.",
            Step::Leads => "Importing leads uses credits, so it is an approval the user decides.",
            Step::Campaign => "Launching sends real emails, so it is an approval the user decides.",
            Step::Replies => "Replies are where the campaign pays off.",
        }
    }
}

/// The facts the journey is computed from; each area fills its own.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// The steps that are done.
    pub done: Vec<Step>,
    /// Where a step stands, when it is under way: the tool that moves it on from here and
    /// why (e.g. the target is saved in words, so the next tool is `save_target_filters`).
    pub within: Vec<(Step, &'static str, String)>,
}

impl Progress {
    /// Marks a step done.
    pub fn done(&mut self, step: Step) {
        if !self.done.contains(&step) {
            self.done.push(step);
        }
    }

    /// Says which tool moves a step on from where it stands, and why.
    pub fn next_within(&mut self, step: Step, tool: &'static str, why: impl Into<String>) {
        self.within.retain(|(s, _, _)| *s != step);
        self.within.push((step, tool, why.into()));
    }

    /// The mailboxes are warming up, expected ready on `until`: weeks with nothing to do for it
    /// but wait, so the warm-up step says so rather than name `start_warmup` again. While the
    /// leads are not in, it names their import, which does not wait for the warm-up (PRODUCT §8:
    /// the context always says what comes next). Call it once `done` is complete.
    pub fn warming(&mut self, until: Option<crate::dates::Date>) {
        let until = until.map(|d| format!(" until about {d}")).unwrap_or_default();
        if self.done.contains(&Step::Leads) {
            self.next_within(
                Step::Warmup,
                "get_sending_setup",
                format!("The mailboxes are warming up{until}; stage the campaign (stage_campaign) once they are ready."),
            );
        } else {
            self.next_within(
                Step::Warmup,
                "import_leads",
                format!(
                    "The mailboxes are warming up{until}; meanwhile, import the leads (import_leads, an approval the \
                     user decides)."
                ),
            );
        }
    }
}

/// A step's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Finished.
    Done,
    /// The first unfinished step.
    Current,
    /// Later.
    Todo,
}

/// One step as shown in the workspace view.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JourneyStep {
    /// Which step.
    pub step: Step,
    /// For people.
    pub title: &'static str,
    /// Done, current or to do.
    pub status: Status,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NextStep {
    /// Which step.
    pub step: Step,
    /// For people.
    pub title: &'static str,
    /// The tool to call, when this connection has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'static str>,
    /// Why it matters, or why it cannot be done from here.
    pub why: String,
}

/// Whether this connection can use a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Listed for this token.
    Available,
    /// It exists, but this token's scopes do not cover it.
    NotAllowed,
    /// This connector does not offer it.
    Missing,
}

/// The journey and the next step. `availability` says whether this connection can use a tool,
/// so the next step never names a tool the model cannot see.
pub fn journey(
    progress: &Progress,
    availability: impl Fn(&str) -> Availability,
) -> (Vec<JourneyStep>, Option<NextStep>) {
    let current = Step::ALL.into_iter().find(|s| !progress.done.contains(s));
    let steps = Step::ALL
        .into_iter()
        .map(|step| JourneyStep {
            step,
            title: step.title(),
            status: if progress.done.contains(&step) {
                Status::Done
            } else if Some(step) == current {
                Status::Current
            } else {
                Status::Todo
            },
        })
        .collect();
    let next = current.map(|step| {
        let within = progress.within.iter().find(|(s, _, _)| *s == step);
        if let Some((_, tool, why)) = within
            && availability(tool) == Availability::Available
        {
            return NextStep { step, title: step.title(), tool: Some(tool), why: why.clone() };
        }
        let tools = step.tools();
        let tool = tools.iter().copied().find(|t| availability(t) == Availability::Available);
        let why = if tool.is_some() {
            step.why().to_owned()
        } else if tools.iter().any(|t| availability(t) == Availability::NotAllowed) {
            format!(
                "{} This connection is read-only, so the user needs to reconnect VibeSell with read and \
                 act access to do it.",
                step.why()
            )
        } else {
            format!(
                "{} This step is done in the VibeSell app for now; it is not available in the chat.",
                step.why()
            )
        };
        NextStep { step, title: step.title(), tool, why }
    });
    (steps, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_unfinished_step_is_next() {
        let all = |_: &str| Availability::Available;
        let (steps, next) = journey(&Progress::default(), all);
        assert_eq!(steps.len(), 13);
        assert_eq!(steps[0].status, Status::Current);
        assert_eq!(steps[1].status, Status::Todo);
        let next = next.unwrap();
        assert_eq!((next.step, next.tool), (Step::Offer, Some("save_offer")));

        let progress = Progress { done: vec![Step::Offer], within: vec![] };
        let only =
            |t: &str| if t == "confirm_target" { Availability::Available } else { Availability::Missing };
        let (steps, next) = journey(&progress, only);
        assert_eq!(steps[0].status, Status::Done);
        assert_eq!(steps[1].status, Status::Current);
        assert_eq!(next.unwrap().tool, Some("confirm_target"));
    }

    #[test]
    fn a_step_under_way_names_the_tool_that_moves_it_on() {
        let mut progress = Progress::default();
        progress.done(Step::Offer);
        progress.next_within(Step::Target, "save_target_filters", "Saved in words; now as filters.");
        let next = journey(&progress, |_| Availability::Available).1.unwrap();
        assert_eq!((next.step, next.tool), (Step::Target, Some("save_target_filters")));
        assert_eq!(next.why, "Saved in words; now as filters.");
        // A tool this connection cannot use falls back to the step's own explanation.
        let next = journey(&progress, |t| {
            if t == "save_target_filters" { Availability::NotAllowed } else { Availability::Available }
        })
        .1
        .unwrap();
        assert_eq!(next.tool, Some("save_target"));
    }

    #[test]
    fn a_warm_up_under_way_names_what_can_be_done_meanwhile() {
        let before_warmup = Step::ALL.iter().copied().take_while(|s| *s != Step::Warmup).collect::<Vec<_>>();
        let mut progress = Progress { done: before_warmup.clone(), within: vec![] };
        progress.warming(crate::dates::parse_ymd("2026-12-18"));
        let next = journey(&progress, |_| Availability::Available).1.unwrap();
        assert_eq!((next.step, next.tool), (Step::Warmup, Some("import_leads")));
        assert!(next.why.contains("warming up until about 2026-12-18"), "{}", next.why);
        // With the leads in, only the wait is left.
        let mut progress = Progress { done: [before_warmup, vec![Step::Leads]].concat(), within: vec![] };
        progress.warming(None);
        let next = journey(&progress, |_| Availability::Available).1.unwrap();
        assert_eq!((next.step, next.tool), (Step::Warmup, Some("get_sending_setup")));
        assert!(next.why.contains("(stage_campaign) once they are ready"), "{}", next.why);
    }

    #[test]
    fn a_missing_tool_is_explained() {
        let next = journey(&Progress::default(), |_| Availability::NotAllowed).1.unwrap();
        assert_eq!(next.tool, None);
        assert!(next.why.contains("read-only"));
        let next = journey(&Progress::default(), |_| Availability::Missing).1.unwrap();
        assert_eq!(next.tool, None);
        assert!(next.why.contains("not available in the chat"));
        let all = Progress { done: Step::ALL.to_vec(), within: vec![] };
        assert!(journey(&all, |_| Availability::Available).1.is_none());
    }
}
