# A worked module over gpuplan's outputs (docs/terraform.md): typed variables from
# gpuplan.auto.tfvars.json, and the full plan through jsondecode(file()). No providers needed.

terraform {
  required_version = ">= 1.0"
}

locals {
  # `gpuplan recommend PROFILE --format json -o plan.json`: every field of the plan.
  plan     = jsondecode(file("${path.module}/plan.json"))
  training = var.gpuplan_training
  # Sizing a node pool and a switch order from the typed variables.
  training_switches = local.training == null ? 0 : (
    local.training.topology == null ? 0 : local.training.topology.leaf_switches + local.training.topology.spine_switches + local.training.topology.core_switches
  )
}

output "meta" {
  value = var.gpuplan
}

output "training" {
  value = var.gpuplan_training
}

output "serving" {
  value = var.gpuplan_serving
}

output "plan" {
  value = local.plan
}

output "training_node_count" {
  value = local.training == null ? 0 : local.training.nodes
}

output "training_switches" {
  value = local.training_switches
}

output "training_gpus_agree" {
  # The tfvars and the JSON are renderings of one plan.
  value = local.training == null ? true : local.training.gpus == local.plan.training.gpus
}

output "serving_priced_bom_usd" {
  value = var.gpuplan_serving == null ? 0 : sum(concat([0], [for item in var.gpuplan_serving.bom : item.total_price_usd == null ? 0 : item.total_price_usd]))
}
