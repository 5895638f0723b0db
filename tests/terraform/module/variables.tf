# gpuplan's typed variables, filled by `gpuplan recommend PROFILE --format tfvars -o gpuplan.auto.tfvars.json`.
# Attributes without a value are null (an infeasible phase has gpu = null, layout = null, bom = []);
# a phase that was not planned is null as a whole.

variable "gpuplan" {
  description = "Provenance of the plan and its findings."
  type = object({
    schema_version  = string
    gpuplan_version = string
    catalog_version = string
    catalog_sha256  = string
    input_sha256    = string
    profile         = string
    workload        = string
    model           = string
    pricing         = string
    errors          = number
    warnings        = number
    findings = list(object({
      severity = string
      code     = string
      phase    = string
      field    = string
      message  = string
    }))
  })
}

variable "gpuplan_training" {
  description = "The training recommendation (null when the profile has no [training])."
  default     = null
  type = object({
    feasible           = bool
    gpu                = string
    gpus               = number
    nodes              = number
    capex_usd          = number
    power_kw           = number
    cloud_usd_per_hour = number
    racks              = number
    unpriced_parts     = list(string)
    wall_clock_days    = number
    step_time_s        = number
    mfu                = number
    tokens_per_s       = number
    gpu_hours          = number
    run_cost_usd       = number
    layout = object({
      tp                     = number
      pp                     = number
      dp                     = number
      cp                     = number
      ep                     = number
      vp                     = number
      micro_batch            = number
      num_micro_batches      = number
      global_batch_sequences = number
      zero                   = number
      recompute              = string
      sequence_parallel      = bool
    })
    network = object({
      scaleup_tech          = string
      scaleup_domain_gpus   = number
      scaleup_uni_gb_per_s  = number
      scaleout_fabric       = string
      scaleout_kind         = string
      nic                   = string
      nics_per_node         = number
      nic_gbit_per_gpu      = number
      required_gbit_per_gpu = number
      rails                 = number
    })
    topology = object({
      kind                = string
      switch              = string
      port_gbit           = number
      tiers               = number
      oversubscription    = number
      nodes               = number
      endpoints           = number
      leaf_switches       = number
      spine_switches      = number
      core_switches       = number
      node_leaf_links     = number
      leaf_spine_links    = number
      spine_core_links    = number
      scalable_unit_nodes = number
    })
    bom = list(object({
      category        = string
      tier            = string
      part_id         = string
      quantity        = number
      unit_price_usd  = number
      total_price_usd = number
      total_power_w   = number
    }))
    tco = object({
      horizon_years     = number
      capex_usd         = number
      opex_usd_per_year = number
      total_usd         = number
      usd_per_gpu_hour  = number
      cloud_total_usd   = number
      breakeven_months  = number
    })
  })
}

variable "gpuplan_serving" {
  description = "The serving recommendation (null when the profile has no [serving])."
  default     = null
  type = object({
    feasible                      = bool
    gpu                           = string
    gpus                          = number
    nodes                         = number
    capex_usd                     = number
    power_kw                      = number
    cloud_usd_per_hour            = number
    racks                         = number
    unpriced_parts                = list(string)
    replicas                      = number
    spare_replicas                = number
    gpus_per_replica              = number
    ttft_ms_p99                   = number
    tpot_ms                       = number
    max_qps                       = number
    usd_per_million_output_tokens = number
    layout = object({
      tp            = number
      pp            = number
      ep            = number
      concurrency   = number
      disaggregated = bool
    })
    network = object({
      scaleup_tech          = string
      scaleup_domain_gpus   = number
      scaleup_uni_gb_per_s  = number
      scaleout_fabric       = string
      scaleout_kind         = string
      nic                   = string
      nics_per_node         = number
      nic_gbit_per_gpu      = number
      required_gbit_per_gpu = number
      rails                 = number
    })
    topology = object({
      kind                = string
      switch              = string
      port_gbit           = number
      tiers               = number
      oversubscription    = number
      nodes               = number
      endpoints           = number
      leaf_switches       = number
      spine_switches      = number
      core_switches       = number
      node_leaf_links     = number
      leaf_spine_links    = number
      spine_core_links    = number
      scalable_unit_nodes = number
    })
    bom = list(object({
      category        = string
      tier            = string
      part_id         = string
      quantity        = number
      unit_price_usd  = number
      total_price_usd = number
      total_power_w   = number
    }))
    tco = object({
      horizon_years     = number
      capex_usd         = number
      opex_usd_per_year = number
      total_usd         = number
      usd_per_gpu_hour  = number
      cloud_total_usd   = number
      breakeven_months  = number
    })
  })
}
