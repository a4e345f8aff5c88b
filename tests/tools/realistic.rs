//! The compile-time bench's realistic tools (`benches/compile/`, measured by
//! `scripts/bench-compile-realistic.sh`) build as they are, and a server takes each of
//! them: the bench measures tools that compile and serve, and a change that refused one of
//! them would fail here rather than only in the bench.

use saga_runtime::prelude::*;

// The owned forms, which builds before issue 55 took too (the bench compares with them).
#[path = "../../benches/compile/realistic/access_review.rs"]
mod owned_access_review;
#[path = "../../benches/compile/realistic/cleanup_paths.rs"]
mod owned_cleanup_paths;
#[path = "../../benches/compile/realistic/code_review.rs"]
mod owned_code_review;
#[path = "../../benches/compile/realistic/config_patch.rs"]
mod owned_config_patch;
#[path = "../../benches/compile/realistic/data_import.rs"]
mod owned_data_import;
#[path = "../../benches/compile/realistic/deploy_hosts.rs"]
mod owned_deploy_hosts;
#[path = "../../benches/compile/realistic/expense_report.rs"]
mod owned_expense_report;
#[path = "../../benches/compile/realistic/feature_flags.rs"]
mod owned_feature_flags;
#[path = "../../benches/compile/realistic/incident_triage.rs"]
mod owned_incident_triage;
#[path = "../../benches/compile/realistic/interview_kit.rs"]
mod owned_interview_kit;
#[path = "../../benches/compile/realistic/invoice_chase.rs"]
mod owned_invoice_chase;
#[path = "../../benches/compile/realistic/meeting_scheduler.rs"]
mod owned_meeting_scheduler;
#[path = "../../benches/compile/realistic/migration_plan.rs"]
mod owned_migration_plan;
#[path = "../../benches/compile/realistic/onboarding_form.rs"]
mod owned_onboarding_form;
#[path = "../../benches/compile/realistic/order_refund.rs"]
mod owned_order_refund;
#[path = "../../benches/compile/realistic/recount.rs"]
mod owned_recount;
#[path = "../../benches/compile/realistic/release_checklist.rs"]
mod owned_release_checklist;
#[path = "../../benches/compile/realistic/secret_rotation.rs"]
mod owned_secret_rotation;
#[path = "../../benches/compile/realistic/survey.rs"]
mod owned_survey;
#[path = "../../benches/compile/realistic/ticket_followup.rs"]
mod owned_ticket_followup;
#[path = "../../benches/compile/realistic/translate_strings.rs"]
mod owned_translate_strings;
#[path = "../../benches/compile/realistic/vendor_compare.rs"]
mod owned_vendor_compare;
#[path = "../../benches/compile/realistic/warehouse_pick.rs"]
mod owned_warehouse_pick;
#[path = "../../benches/compile/realistic/workspace_scan.rs"]
mod owned_workspace_scan;

// The same tools' borrowing forms, and an agent loop.
#[path = "../../benches/compile/borrows/data_import.rs"]
mod borrowing_data_import;
#[path = "../../benches/compile/borrows/deploy_hosts.rs"]
mod borrowing_deploy_hosts;
#[path = "../../benches/compile/borrows/migration_plan.rs"]
mod borrowing_migration_plan;
#[path = "../../benches/compile/borrows/recount.rs"]
mod borrowing_recount;
#[path = "../../benches/compile/borrows/research_agent.rs"]
mod borrowing_research_agent;
#[path = "../../benches/compile/borrows/translate_strings.rs"]
mod borrowing_translate_strings;
#[path = "../../benches/compile/borrows/workspace_scan.rs"]
mod borrowing_workspace_scan;

#[test]
fn every_realistic_tool_is_served() {
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(owned_access_review::access_review)
        .tool(owned_cleanup_paths::cleanup_paths)
        .tool(owned_code_review::code_review)
        .tool(owned_config_patch::config_patch)
        .tool(owned_data_import::data_import)
        .tool(owned_deploy_hosts::deploy_hosts)
        .tool(owned_expense_report::expense_report)
        .tool(owned_feature_flags::feature_flags)
        .tool(owned_incident_triage::incident_triage)
        .tool(owned_interview_kit::interview_kit)
        .tool(owned_invoice_chase::invoice_chase)
        .tool(owned_meeting_scheduler::schedule_meeting)
        .tool(owned_migration_plan::migration_plan)
        .tool(owned_onboarding_form::onboarding)
        .tool(owned_order_refund::order_refund)
        .tool(owned_recount::recount)
        .tool(owned_release_checklist::release_checklist)
        .tool(owned_secret_rotation::secret_rotation)
        .tool(owned_survey::survey)
        .tool(owned_ticket_followup::ticket_followup)
        .tool(owned_translate_strings::translate_strings)
        .tool(owned_vendor_compare::vendor_compare)
        .tool(owned_warehouse_pick::warehouse_pick)
        .tool(owned_workspace_scan::workspace_scan)
        .build()
        .expect("the owned forms are served");
    assert_eq!(tools.tools().count(), 24);
    let tools = SagaTools::builder()
        .keys(KeyRing::ephemeral())
        .tool(borrowing_data_import::data_import)
        .tool(borrowing_deploy_hosts::deploy_hosts)
        .tool(borrowing_migration_plan::migration_plan)
        .tool(borrowing_recount::recount)
        .tool(borrowing_research_agent::research_agent)
        .tool(borrowing_translate_strings::translate_strings)
        .tool(borrowing_workspace_scan::workspace_scan)
        .build()
        .expect("the borrowing forms are served");
    assert_eq!(tools.tools().count(), 7);
}
