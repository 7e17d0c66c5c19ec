"""Every walk group `scripts/validate_all.py` runs: its name (`--groups`), the module beside
this file that builds its walks ("" for `scripts/validate.py`'s own) and its walks, comma-separated.
A new batch of walks is a new module and one row here."""

# (group, walk module ("" for validate.py's own), walks)
GROUPS = [
    ("val", "", "llama_decode_b1,llama_decode_b16,llama_prefill_512,gpt2_decode_b1,"
                "qwen2_decode_b4,fp16_mlp_1024,two_streams,cupy_chain,pinned_copies"),
    ("more", "more_walks.py", "mistral_decode_b2,gpt2_small_decode_b8,qwen2_prefill_128,cnn_b1,"
                              "fp16_decode_4096,two_streams_small,cupy_reduce,cuda_cpp"),
    ("unseen", "unseen_walks.py", "phi3_decode_b1,gemma_decode_b2,bert_b32_s128,compiled_decoder,"
                                  "fp32_mlp_b4,cupy_fft,two_streams_experts"),
    ("final", "final_walks.py", "neox_decode_b1,llama_prefill_2x256"),
    ("load", "load_walks.py", "kv_projections_b4,wide_pair_bf16,gemm_beside_norms"),
    ("bandwidth", "bandwidth_walks.py", "four_gemv_chains,mlp_pair_b32,gemm_beside_long_attention"),
    ("sharing", "sharing_walks.py", "three_experts_bf16_b16,prefill_branches_256,gemv_beside_attention"),
    ("concurrent", "concurrent_walks.py", "four_experts_b4,decode_and_sample,norm_branches_b32"),
    ("paced", "paced_walks.py", "two_requests_decode,attention_pair_8192,prefill_beside_decode"),
    ("decoder", "decoder_walks.py", "fp16_decoder_1024_l24,fp16_decoder_4096_l32"),
    ("stream", "stream_walks.py", "two_streams_linear,two_streams_attention,three_streams"),
    ("tf32", "tf32_walks.py", "tf32_mlp_prefill,tf32_two_branches"),
    ("fat", "fat_block_walks.py", "gemv_trio_mixed,attention_beside_prefill,gated_pair_b4,"
                                  "attention_pair_32_heads"),
    ("copies", "copy_node_walks.py", "adds_only,adds_small_copies,adds_large_copies"),
    ("short", "short_kernel_walks.py", "adds_768,adds_64k,adds_1m,mixed_768,adds_768_f32"),
    ("later", "later_walks.py", "starcoder2_decode_b4,gru_cell_32,embedding_bags_b512,"
                                "sdpa_prefill_4096,draft_and_verify"),
    ("fresh", "fresh_walks.py", "qwen3_decode_b8,groupnorm_conv_b2,lora_beside_base,"
                                "cupy_raw_kernels,kv_cache_attention_b4"),
    ("l2", "l2_walks.py", "tiny_gpt2_decode_b1,small_mlp_decode_b1,mobilenet_blocks_b1"),
    ("untried", "untried_walks.py", "fp8_gemm_chain_b64,dense_moe_b8,vit_b16_b1,"
                                    "sampling_b32_v128k,h2d_beside_gemms,"
                                    "cross_attention_decode_b4,ssm_decode_b1,"
                                    "parallel_block_decode_b8"),
    ("unmet", "unmet_walks.py", "opt_decode_b4,llama_decode_b64,mlp_train_step_b64,"
                                "int8_gemm_chain_b32,convnext_blocks_b4,staged_three_streams,"
                                "cupy_row_softmax"),
    ("events", "event_walks.py", "broadcast_three_consumers,reused_event_pipeline,"
                                 "prefetch_next_weights,ping_pong_streams,forks_on_one_event"),
    ("heldout", "heldout_walks.py", "ho_gate_beside_up_b8,ho_norm_beside_proj_b16,"
                                    "ho_softmax_beside_gemm_b4,ho_two_prefill_384,"
                                    "ho_embedding_beside_gemm,ho_small_branches_fp32,"
                                    "ho_attention_beside_mlp_b2,ho_rmsnorm_beside_lm_head_b4,"
                                    "ho_three_small_branches_f16,ho_conv_beside_groupnorm,"
                                    "ho_bf16_pairs_b32,ho_gptj_decode_b4,ho_olmo_decode_b1,"
                                    "ho_stablelm_prefill_64,ho_conv1d_stack_b8,"
                                    "ho_topk_sort_b64,ho_fp32_mlp_b128,ho_cupy_stencil"),
    ("heldout2", "heldout_2_walks.py", "hb_cohere_decode_b2,hb_granite_decode_b4,hb_mpt_decode_b1,"
                                       "hb_cupy_reductions,hb_bottlenecks_b8,hb_lstm_b16,"
                                       "hb_mlp_prefill_512_bf16,hb_scatter_index_b64,"
                                       "hb_kv_copy_beside_attention,hb_inception_branches,"
                                       "hb_two_experts_b64,hb_fp32_pair_b256"),
    ("heldout3", "heldout_3_walks.py", "hc_phi_decode_b8,hc_cupy_row_norms,hc_conv_transpose_b4,"
                                       "hc_math_attention_b2_s1024,hc_gnn_message_passing,"
                                       "hc_three_decode_requests,hc_norm_beside_prefill_attention,"
                                       "hc_gemm_beside_copies"),
    ("heldout4", "heldout_4_walks.py", "hd_falcon_decode_b2,hd_gemma2_decode_b1,hd_olmo2_prefill_32,"
                                       "hd_cupy_raw_kernels,hd_unet_block_b2,"
                                       "hd_reductions_beside_gemm,hd_tf32_pair_b128,"
                                       "hd_elementwise_four_streams,hd_conv_beside_linear,"
                                       "hd_mqa_decode_beside_ffn,hd_layernorm_pair"),
    ("heldout5", "heldout_5_walks.py", "he_phi3_decode_b4,he_gptneox_decode_b2,he_adam_foreach_step,"
                                       "he_elementwise_beside_proj,he_gqa_decode_beside_mlp,"
                                       "he_casts_beside_conv,he_rmsnorm_rows_beside_gemm,"
                                       "he_log_softmax_beside_mlp,he_three_streams_mixed"),
    ("heldout6", "heldout_6_walks.py", "hf_starcoder2_decode_b2,hf_mistral_prefill_64,"
                                       "hf_layernorm_rows_beside_gemm,"
                                       "hf_softmax_scores_beside_matmul,"
                                       "hf_gelu_bias_beside_decode_attention,"
                                       "hf_masked_fill_beside_gemm,hf_big_gemm_beside_adds,"
                                       "hf_two_decode_attentions,"
                                       "hf_row_sums_beside_prefill_attention"),
    ("heldout7", "heldout_7_walks.py", "hg_qwen3_decode_b16,hg_gemma_prefill_32,"
                                       "hg_cupy_small_kernels,hg_decode_attention_beside_gemv,"
                                       "hg_kv_write_attention_beside_mlp,hg_rope_beside_gemm,"
                                       "hg_variance_beside_conv,"
                                       "hg_embedding_beside_decode_attention,"
                                       "hg_three_streams_nested"),
    ("heldout8", "heldout_8_walks.py", "hh_stablelm_decode_b8,hh_phi_prefill_48,hh_conv1d_chain,"
                                       "hh_decode_2k_beside_layernorm,hh_decode_16k_beside_gemm,"
                                       "hh_decode_8k_beside_softmax,"
                                       "hh_copy_beside_decode_attention,hh_gemv_beside_row_sums,"
                                       "hh_three_streams_attention_mlp_norm"),
    ("heldout9", "heldout_9_walks.py", "hi_llama_decode_b32,hi_qwen2_prefill_128,hi_gru_cell_steps,"
                                       "hi_prefill_beside_decode_attention,"
                                       "hi_decode_attention_beside_swiglu,hi_gqa_decode_beside_adds,"
                                       "hi_two_decode_attentions_4k,hi_f32_layernorm_beside_gemm,"
                                       "hi_three_streams_decode"),
    ("heldout10", "heldout_10_walks.py", "hj_glm_decode_b4,hj_helium_prefill_32,"
                                         "hj_depthwise_conv_chain,"
                                         "hj_rmsnorm_beside_decode_attention,"
                                         "hj_groupnorm_beside_conv,hj_row_sums_f32_beside_gemm,"
                                         "hj_softmax_rows_beside_decode_attention,"
                                         "hj_cat_beside_gemv,hj_three_streams_prefill"),
    ("heldout11", "heldout_11_walks.py", "hk_nemotron_decode_b8,hk_cohere_prefill_64,"
                                         "hk_conv1d_gelu_chain,hk_batchnorm_beside_gemm,"
                                         "hk_topk_beside_gemv,"
                                         "hk_silu_mul_beside_prefill_attention,"
                                         "hk_cumsum_beside_gemm,"
                                         "hk_index_copy_beside_decode_attention,"
                                         "hk_three_streams_decode_norm"),
    ("heldout12", "heldout_12_walks.py", "hl_qwen2_decode_b64,hl_llama_prefill_256,"
                                         "hl_linear_gelu_chain,hl_softmax_beside_gemm,"
                                         "hl_adds_beside_conv,hl_gelu_beside_bmm,"
                                         "hl_rmsnorm_beside_prefill_attention,"
                                         "hl_transpose_copy_beside_gemv,"
                                         "hl_three_streams_gemm_norm_adds"),
    ("heldout13", "heldout_13_walks.py", "hm_gptbigcode_decode_b4,hm_llama_decode_b128,"
                                         "hm_f32_mlp_b512,hm_f32_linear_pair_b128,"
                                         "hm_f32_bmm_beside_gemm,hm_tf32_beside_bf16,"
                                         "hm_layernorm_beside_f32_gemm,hm_silu_beside_gemv,"
                                         "hm_three_streams_f32"),
    ("heldout14", "heldout_14_walks.py", "hn_gptneox_prefill_2x128,hn_gptj_decode_b16,"
                                         "hn_starcoder2_prefill_256,hn_bf16_linear_branches_b512,"
                                         "hn_tf32_linear_pair_b256,hn_gelu_beside_linear_b64,"
                                         "hn_softmax_beside_bmm,hn_embedding_beside_mlp,"
                                         "hn_three_streams_linear_bias"),
    ("heldout15", "heldout_15_walks.py", "hp_bloom_decode_b8,hp_codegen_prefill_256,"
                                         "hp_biogpt_decode_b32,hp_sort_beside_linear,"
                                         "hp_avgpool_beside_conv,hp_upsample_beside_linear,"
                                         "hp_f32_gemv_beside_bf16_gemm,hp_bmm_pair_bf16,"
                                         "hp_four_streams_norm_linear"),
    ("heldout16", "heldout_16_walks.py", "hq_bloom_decode_b4,hq_persimmon_decode_b4,"
                                         "hq_xglm_prefill_128,hq_layernorm_beside_bmm,"
                                         "hq_conv_beside_gemv,"
                                         "hq_softmax_beside_prefill_attention,"
                                         "hq_two_mlps_b64_b16,hq_rope_beside_gemm,"
                                         "hq_three_streams_bmm_norm_gemv"),
    ("heldout17", "heldout_17_walks.py", "hr_gpt2_f32_decode_b8,hr_olmo_prefill_64,"
                                         "hr_f32_linear_pair_b64,hr_f32_mlp_beside_bf16_mlp,"
                                         "hr_f32_bmm_pair,hr_f32_gemm_beside_softmax,"
                                         "hr_three_streams_small_f32,hr_f32_conv_pair,"
                                         "hr_f32_gemv_beside_layernorm"),
    ("heldout18", "heldout_18_walks.py", "hs_qwen2_f32_decode_b4,hs_gpt2_f32_decode_b8,"
                                         "hs_f32_linear_pair_b32_d4096,hs_f32_mlp_pair_b512,"
                                         "hs_f32_attention_pair,hs_f32_gemm_beside_bf16_gemv,"
                                         "hs_four_streams_f32_b64,hs_f32_gemm_beside_adds,"
                                         "hs_f32_conv_beside_linear"),
    ("heldout19", "heldout_19_walks.py", "hu_qwen3_prefill_32,hu_phi3_decode_b2,"
                                         "hu_f32_linear_pair_b8,"
                                         "hu_f32_linear_beside_decode_attention,"
                                         "hu_bf16_mlp_beside_f32_rmsnorm,hu_f32_linear_pair_b1,"
                                         "hu_three_streams_f32_gemm_softmax_norm,"
                                         "hu_f32_baddbmm_pair,hu_gelu_beside_f32_gemm"),
    ("heldout20", "heldout_20_walks.py", "hv_f32_gemv_pair_b4,hv_f32_gemv_beside_bf16_mlp,"
                                         "hv_f32_linear_b16_beside_softmax,"
                                         "hv_three_streams_f32_gemv,hv_f32_gemv_beside_f32_gemm"),
    ("heldout21", "heldout_21_walks.py", "hw_mistral_decode_b8,hw_gemma_prefill_64,"
                                         "hw_granite_decode_b1,hw_stablelm_prefill_16,"
                                         "hw_draft_beside_target,hw_bf16_mlp_pair_b32,"
                                         "hw_rmsnorm_beside_bf16_gemm_b256,"
                                         "hw_three_expert_mlps_b16"),
    ("heldout22", "heldout_22_walks.py", "hx_opt_decode_b4,hx_qwen2_7b_slice_decode_b1,"
                                         "hx_prefill_beside_decode,hx_vit_beside_decode,"
                                         "hx_flash_prefill_beside_mlp_b512,"
                                         "hx_h2d_kv_beside_decode"),
    ("heldout23", "heldout_23_walks.py", "hy_qwen2_beside_llama_b4,hy_mistral_prefill_beside_decode,"
                                         "hy_gpt2_two_batches,hy_three_small_decodes,"
                                         "hy_decode_beside_image_post,"
                                         "hy_decode_beside_retrieval_encoder"),
    ("heldout24", "heldout_24_walks.py", "hz_bert_encoder_beside_decode,hz_medusa_heads_b1,"
                                         "hz_four_experts_with_router_b8,"
                                         "hz_gptneox_beside_qwen2_prefill,hz_two_phi3_decodes,"
                                         "hz_kv_append_beside_decode,hz_qwen3_decode_b8"),
    ("heldout25", "heldout_25_walks.py", "ia_two_gpt2_decodes_b1,ia_prefill_attention_beside_norms,"
                                         "ia_sampling_beside_decode_b8,ia_conv_blocks_beside_gemvs"),
    ("heldout26", "heldout_26_walks.py", "ib_olmo2_decode_b4,ib_two_mistral_decodes_b2,"
                                         "ib_rmsnorms_beside_gemvs,ib_sampling_beside_prefill_mlp"),
    ("heldout27", "heldout_27_walks.py", "ic_llama_decode_b8_gqa,ic_two_qwen3_decodes,"
                                         "ic_layernorm_gelu_beside_gemvs,"
                                         "ic_rope_kv_beside_mlp_and_softmax"),
    ("heldout28", "heldout_28_walks.py", "id_starcoder2_decode_b8,id_three_gpt2_decodes_b1,"
                                         "id_four_lanes_of_small_decoder_kernels,"
                                         "id_two_add_lanes_beside_projections"),
    ("heldout29", "heldout_29_walks.py", "ie_gemma_decode_b4,ie_decode_beside_prefill_chunk,"
                                         "ie_projection_with_adapter_lanes,"
                                         "ie_embedding_bags_beside_mlp"),
    ("heldout30", "heldout_30_walks.py", "if_phi_decode_b1,if_decode_beside_kv_block_copies,"
                                         "if_three_sampling_lanes,if_cross_attention_beside_ffn"),
    ("heldout31", "heldout_31_walks.py", "ig_falcon_mqa_decode_b16,ig_decode_beside_kv_offload,"
                                         "ig_top_p_beside_decode,ig_text_beside_vision_encoders"),
    ("heldout32", "heldout_32_walks.py", "ih_smollm3_decode_b8,ih_glm4_prefill_64,"
                                         "ih_decode_beside_draft_acceptance,ih_controlnet_beside_unet"),
    ("heldout33", "heldout_33_walks.py", "ii_llama_wide_decode_b1,ii_cupy_layernorm_chain,"
                                         "ii_shared_expert_beside_dispatch,ii_decode_beside_logits_to_host"),
    ("heldout34", "heldout_34_walks.py", "ij_convnext_stages_b4,ij_rwkv_time_mix_scan,"
                                         "ij_decode_beside_beam_reorder,ij_whisper_encoder_beside_decode"),
    ("heldout35", "heldout_35_walks.py", "ik_qwen2_verify_b8_s4,ik_t5_encoder_b2_s256,"
                                         "ik_cupy_prefix_sums,ik_lora_adapters_beside_base"),
    ("heldout36", "heldout_36_walks.py", "il_persimmon_decode_b2,il_conformer_conv_modules,"
                                         "il_cupy_kmeans_step,il_split_mlp_halves_b16"),
    ("heldout37", "heldout_37_walks.py", "im_mamba_scan_b2_s16,im_arcee_decode_b4,"
                                         "im_cupy_jacobi_sweeps,im_trunk_into_four_heads"),
    ("heldout38", "heldout_38_walks.py", "io_cohere2_decode_b2,io_swin_stages_b2,"
                                         "io_fp8_quantise_beside_gemm,io_eight_expert_lanes_b8"),
    ("heldout39", "heldout_39_walks.py", "ip_ernie45_decode_b4,ip_cupy_softmax_xent,"
                                         "ip_three_gated_mlps_b8,ip_three_norm_qkv_lanes_b4"),
    ("heldout40", "heldout_40_walks.py", "iq_glm_decode_b4,iq_cupy_rmsnorm_stack,"
                                         "iq_four_gelu_linear_lanes_b4,iq_three_widths_silu_lanes_b16"),
    ("heldout41", "heldout_41_walks.py", "ir_gemma3_decode_b2,ir_qwen3_moe_decode_b4,"
                                         "ir_cupy_fused_elementwise,"
                                         "ir_attention_beside_swiglu_b8,ir_norm_linear_lanes_b32"),
    ("heldout42", "heldout_42_walks.py", "is_qwen2_moe_decode_b2,is_three_gelu_lanes_1536_b8,"
                                         "is_four_rmsnorm_gemv_lanes_b2,is_three_attention_lanes_b4"),
    ("heldout43", "heldout_43_walks.py", "it_mixtral_decode_b2,it_cupy_row_reductions,"
                                         "it_two_llama_decodes,it_three_conv_lanes_b4,"
                                         "it_mlp_lanes_beside_layernorms"),
    ("heldout44", "heldout_44_walks.py", "iu_llama_3072_decode_b4,iu_cupy_custom_elementwise,"
                                         "iu_mlp_block_lanes_b8,"
                                         "iu_rmsnorm_lanes_beside_projections,"
                                         "iu_gelu_chain_beside_prefill_gemms,"
                                         "iu_two_qwen2_decodes"),
    ("heldout45", "heldout_45_walks.py", "iv_two_linear_lanes_3072_b2,"
                                         "iv_three_gated_mlp_lanes_b4,"
                                         "iv_softmax_beside_projection_lanes,"
                                         "iv_four_layernorm_gelu_lanes_b16,"
                                         "iv_attention_lanes_beside_mlp_b2,"
                                         "iv_two_llama_1536_decodes"),
    ("heldout46", "heldout_46_walks.py", "iw_adds_beside_wide_decode_gemms,"
                                         "iw_adds_beside_narrow_decode_gemms,"
                                         "iw_two_wide_gemm_lanes_b8,"
                                         "iw_rmsnorm_beside_up_projections_b2,"
                                         "iw_layernorm_gelu_lanes_beside_attention_b4,"
                                         "iw_qwen2_decode_beside_sampling"),
    ("heldout47", "heldout_47_walks.py", "ix_rope_beside_qkv_projections,"
                                         "ix_silu_lanes_beside_gemvs,"
                                         "ix_residual_beside_decode_attention_b8,"
                                         "ix_where_clamp_beside_up_projections_b8,"
                                         "ix_two_sampling_lanes_beside_mlp_b2,"
                                         "ix_phi3_decode_beside_embedding_lookups"),
    ("heldout48", "heldout_48_walks.py", "iy_rmsnorm_lanes_beside_gate_up_b4,"
                                         "iy_layernorm_beside_gemv_lanes_b1,"
                                         "iy_softmax_lanes_beside_projections,"
                                         "iy_cumsum_beside_down_projections,"
                                         "iy_group_norm_beside_convolutions,"
                                         "iy_neox_decode_beside_log_softmax_top_k"),
    ("heldout49", "heldout_49_walks.py", "iz_layernorm_lanes_beside_wide_gemv,"
                                         "iz_reductions_beside_decode_gemms,"
                                         "iz_adds_beside_narrow_gemv_lanes,"
                                         "iz_softmax_beside_wide_projections_b4,"
                                         "iz_groupnorm_silu_beside_attention,"
                                         "iz_qwen3_decode_beside_layernorm_lane"),
    ("heldout50", "heldout_50_walks.py", "ja_rmsnorm_beside_down_projections_b2,"
                                         "ja_layernorm_beside_two_gemv_lanes_bf16,"
                                         "ja_var_mean_beside_qkv_b8,"
                                         "ja_logsumexp_beside_output_projections_b2,"
                                         "ja_l2_normalise_beside_three_gemv_lanes,"
                                         "ja_mistral_decode_beside_rmsnorm_lane"),
    ("heldout51", "heldout_51_walks.py", "jb_softmax_beside_up_projection_gemvs,"
                                         "jb_groupnorm_beside_two_gemv_lanes,"
                                         "jb_sums_beside_decode_attention_b2,"
                                         "jb_argmax_beside_projections_b4,"
                                         "jb_embedding_lookups_beside_gemv_lanes,"
                                         "jb_llama_decode_beside_layernorm_lane"),
    ("heldout52", "heldout_52_walks.py", "kc_row_maxima_beside_two_gemv_lanes,"
                                         "kc_vector_norms_beside_down_projections_b2,"
                                         "kc_sequence_means_beside_decode_attention_b4,"
                                         "kc_cumsums_beside_linear_layers_b1,"
                                         "kc_rmsnorm_lanes_beside_qkv_gemvs,"
                                         "kc_llama_decode_beside_sum_lane"),
    ("heldout53", "heldout_53_walks.py", "kd_qwen2_decode_b8,"
                                         "kd_column_sums_beside_two_gemv_lanes,"
                                         "kd_wide_layernorms_beside_decode_attention_b2,"
                                         "kd_mean_pooling_beside_linear_layers_b8,"
                                         "kd_log_softmax_beside_output_gemvs,"
                                         "kd_variances_beside_two_linear_lanes_b2"),
    ("heldout54", "heldout_54_walks.py", "ke_llama_2560_decode_b4,"
                                         "ke_gelu_beside_wide_gemv,"
                                         "ke_rmsnorm_beside_two_wide_gemv_lanes,"
                                         "ke_softmax_beside_three_gemv_lanes,"
                                         "ke_top_k_beside_two_output_projection_lanes,"
                                         "ke_residual_layernorm_beside_attention_and_gemvs_b4"),
    ("heldout55", "heldout_55_walks.py", "kf_mistral_decode_b4,"
                                         "kf_attention_beside_mlp_lane_b2,"
                                         "kf_router_beside_two_expert_lanes,"
                                         "kf_lora_adapters_beside_base_b8,"
                                         "kf_dequantise_beside_gemv_lane,"
                                         "kf_repetition_penalty_beside_output_lanes"),
    ("heldout56", "heldout_56_walks.py", "kg_phi3_decode_b8,"
                                         "kg_wide_adds_beside_gemv_lane,"
                                         "kg_silu_mul_beside_two_gemv_lanes,"
                                         "kg_rmsnorm_b32_beside_gemv_lane,"
                                         "kg_gelu_beside_fp16_gemv_lane,"
                                         "kg_residual_adds_beside_qkv_lanes"),
    ("heldout57", "heldout_57_walks.py", "kh_llama_3072_decode_b2,"
                                         "kh_wide_silu_beside_fp16_gemv_lane,"
                                         "kh_adds_64_blocks_beside_gemv_lane,"
                                         "kh_rmsnorm_3072_beside_wide_gemv_lane,"
                                         "kh_small_adds_beside_two_gemv_lanes,"
                                         "kh_logits_softmax_beside_three_gemv_lanes"),
    ("heldout58", "heldout_58_walks.py", "ki_granite_2560_decode_b16,"
                                         "ki_layernorm_beside_two_fp16_gemv_lanes,"
                                         "ki_chains_taking_turns,"
                                         "ki_muls_beside_prefill_gemm,"
                                         "ki_gelu_tanh_beside_two_gemv_lanes,"
                                         "ki_embedding_lookups_beside_mlp_lane"),
    ("heldout59", "heldout_59_walks.py", "kj_starcoder2_3072_decode_b4,"
                                         "kj_decode_attention_beside_gemv_lane,"
                                         "kj_rmsnorm_beside_prefill_gemm,"
                                         "kj_sampling_beside_output_projection,"
                                         "kj_three_small_mlp_lanes,"
                                         "kj_score_softmax_beside_two_gemv_lanes"),
    ("heldout60", "heldout_60_walks.py", "kk_glm4_2048_decode_b8,"
                                         "kk_gemv_chains_taking_turns,"
                                         "kk_rotary_beside_gemv_lane,"
                                         "kk_depthwise_conv_beside_gemv_lane,"
                                         "kk_kv_cache_writes_beside_two_gemv_lanes,"
                                         "kk_prefix_sum_beside_gemv_lane"),
    ("heldout61", "heldout_61_walks.py", "kl_gemma2_2304_decode_b4,"
                                         "kl_lora_rank8_beside_base_b1,"
                                         "kl_lora_rank64_beside_two_projection_lanes,"
                                         "kl_classifier_heads_beside_wide_gemv_lane,"
                                         "kl_router_top1_beside_two_expert_lanes,"
                                         "kl_draft_heads_beside_decode_gemv_lane"),
    ("heldout62", "heldout_62_walks.py", "km_qwen2_3584_decode_b2,"
                                         "km_six_element_wise_lanes,"
                                         "km_four_rmsnorm_silu_lanes,"
                                         "km_wide_gelu_beside_two_gemv_lanes,"
                                         "km_eight_small_expert_lanes_b4,"
                                         "km_wide_residual_adds_beside_gemv_lane"),
    ("heldout63", "heldout_63_walks.py", "kn_inplace_negation_loop,"
                                         "kn_copy_loop_bf16,"
                                         "kn_clamp_and_scale_fp16,"
                                         "kn_fill_and_add_f32,"
                                         "kn_two_lanes_of_inplace_adds,"
                                         "kn_three_lanes_of_muls_and_divs_bf16"),
    ("heldout64", "heldout_64_walks.py", "ko_stft_mel_frontend,"
                                         "ko_pixel_shuffle_upsampler_fp16,"
                                         "ko_router_expert_counts_bf16,"
                                         "ko_grid_sample_beside_conv_lane,"
                                         "ko_searchsorted_beside_gemv_lane,"
                                         "ko_flip_roll_lanes_bf16"),
    ("heldout65", "heldout_65_walks.py", "kp_vq_codebook_lookup,"
                                         "kp_im2col_unfold_matmul_fp16,"
                                         "kp_log_space_scan_bf16,"
                                         "kp_draft_verify_turns_bf16,"
                                         "kp_prefetch_double_buffer_fp16,"
                                         "kp_microbatch_pipeline_three_stages"),
    ("heldout66", "heldout_66_walks.py", "kq_two_stage_pipeline_mlp_blocks_fp16,"
                                         "kq_shards_reduced_as_they_arrive_bf16,"
                                         "kq_ring_of_four_streams_f32,"
                                         "kq_chunked_encoder_feeding_decoder_fp16,"
                                         "kq_reused_ready_events_pipeline_bf16,"
                                         "kq_shared_expert_beside_routed_combine_bf16"),
    ("heldout67", "heldout_67_walks.py", "kr_unequal_stages_reused_events_bf16,"
                                         "kr_producer_event_three_consumers_fp16,"
                                         "kr_compute_hands_layers_to_reducer_f32,"
                                         "kr_draft_target_fresh_events_fp16,"
                                         "kr_kv_cache_writes_on_side_stream_bf16,"
                                         "kr_two_replicas_waiting_on_router_bf16"),
    ("heldout68", "heldout_68_walks.py", "ks_four_lanes_of_bias_gelu_f32,"
                                         "ks_two_lanes_of_residual_layernorm_bf16,"
                                         "ks_three_lanes_of_scaled_softmax_fp16,"
                                         "ks_elementwise_lanes_beside_gemv_lane_bf16,"
                                         "ks_six_lanes_of_small_multiply_adds_f32,"
                                         "ks_two_lanes_of_wide_adds_fp16"),
    ("heldout69", "heldout_69_walks.py", "kt_four_lanes_of_rotary_bf16,"
                                         "kt_rmsnorm_lanes_beside_attention_fp16,"
                                         "kt_gelu_lanes_beside_small_mlp_bf16,"
                                         "kt_two_lanes_of_bias_relu_scale_f32,"
                                         "kt_eight_lanes_of_written_out_silu_fp16,"
                                         "kt_three_lanes_of_log_softmax_exp_f32"),
    ("heldout70", "heldout_70_walks.py", "ku_three_lanes_of_masked_scaling_f32,"
                                         "ku_two_lanes_of_layernorm_gelu_bf16,"
                                         "ku_four_lanes_of_residual_scale_fp16,"
                                         "ku_elementwise_lanes_beside_two_gemv_lanes_fp16,"
                                         "ku_five_lanes_of_clamp_sqrt_f32,"
                                         "ku_two_lanes_of_softmax_mul_bf16"),
    ("heldout71", "heldout_71_walks.py", "kv_four_lanes_of_rotate_half_fp16,"
                                         "kv_two_lanes_of_kv_cache_appends_bf16,"
                                         "kv_three_lanes_of_feature_joins_f32,"
                                         "kv_rotary_lanes_beside_gemv_lane_bf16,"
                                         "kv_two_lanes_of_stack_sums_fp16,"
                                         "kv_six_lanes_of_tiny_cats_f32"),
    ("heldout72", "heldout_72_walks.py", "kw_two_replica_mlps_bf16,"
                                         "kw_three_lanes_of_gemv_pairs_fp16,"
                                         "kw_two_stage_pipeline_bf16,"
                                         "kw_adapters_beside_base_bf16,"
                                         "kw_four_expert_lanes_fp16,"
                                         "kw_qkv_projection_lanes_bf16"),
    ("heldout73", "heldout_73_walks.py", "kx_two_lanes_of_gelu_fp16,"
                                         "kx_three_lanes_of_sigmoid_gates_bf16,"
                                         "kx_four_lanes_of_residual_scales_f32,"
                                         "kx_six_lanes_of_scale_shift_fp16,"
                                         "kx_softplus_lanes_beside_small_tanh_lanes_f32,"
                                         "kx_clamped_exp_lanes_of_three_sizes_bf16"),
    ("heldout74", "heldout_74_walks.py", "ky_gelu_lanes_beside_two_gemv_lanes_bf16,"
                                         "ky_silu_gate_lane_beside_mlp_lane_fp16,"
                                         "ky_four_lanes_of_tiny_adds_f32,"
                                         "ky_mixed_size_mul_lanes_bf16,"
                                         "ky_layernorm_lanes_beside_projection_lane_bf16,"
                                         "ky_three_lanes_of_rmsnorm_fp16"),
    ("heldout75", "heldout_75_walks.py", "kz_cupy_saxpy_raw_loop,"
                                         "kz_cupy_standardise_columns,"
                                         "kz_cupy_raw_gemv_layers,"
                                         "kz_cupy_fft_lowpass,"
                                         "kz_cupy_inverse_cdf_sampling,"
                                         "kz_cupy_elementwise_ladder"),
    ("heldout76", "heldout_76_walks.py", "la_three_lanes_of_bias_gelu_fp16,"
                                         "la_four_lanes_of_silu_mul_bf16,"
                                         "la_two_lanes_of_row_softmax_f32,"
                                         "la_five_lanes_of_centre_scale_fp16,"
                                         "la_wide_adds_beside_rmsnorm_lanes_f32,"
                                         "la_layernorm_lanes_beside_gemv_lane_fp16"),
    ("heldout77", "heldout_77_walks.py", "lb_four_lanes_of_small_scale_adds_f32,"
                                         "lb_two_lanes_of_wide_adds_bf16,"
                                         "lb_sigmoid_gate_lanes_beside_two_gemv_lanes_fp16,"
                                         "lb_scaled_exp_lanes_of_three_sizes_fp16,"
                                         "lb_six_lanes_of_tanh_products_fp16,"
                                         "lb_residual_scale_lanes_beside_mlp_lane_bf16"),
    ("heldout78", "heldout_78_walks.py", "lc_five_lanes_of_one_block_adds_f32,"
                                         "lc_three_lanes_of_multiply_adds_fp16,"
                                         "lc_four_lanes_of_relu_products_bf16,"
                                         "lc_two_lanes_of_clamps_f32,"
                                         "lc_tiny_adds_beside_two_gelu_lanes,"
                                         "lc_division_lanes_of_three_sizes_fp16"),
    ("heldout79", "heldout_79_walks.py", "ld_olmo2_1536_decode_b4,"
                                         "ld_helium_1024_prefill_256,"
                                         "ld_qwen3_1024_decode_b16,"
                                         "ld_gptneox_768_decode_b1,"
                                         "ld_two_gated_mlps_beside_norm_lane_bf16,"
                                         "ld_cupy_row_layernorm_gelu"),
    ("heldout80", "heldout_80_walks.py", "le_stablelm_2048_decode_b2,"
                                         "le_granite_1024_prefill_128,"
                                         "le_phi3_1536_decode_b8,"
                                         "le_draft_beside_target_decodes,"
                                         "le_attention_beside_gemv_lane_fp16,"
                                         "le_cupy_row_softmax"),
    ("heldout81", "heldout_81_walks.py", "lf_mistral_1024_decode_b4,"
                                         "lf_gemma_2048_prefill_64,"
                                         "lf_qwen2_896_decode_b32,"
                                         "lf_two_gpt2_decodes_fp16,"
                                         "lf_gemm_lane_beside_softmax_lanes_bf16,"
                                         "lf_cupy_tanh_mlp"),
    ("heldout82", "heldout_82_walks.py", "lg_llama_1024_static_cache_decode_b1,"
                                         "lg_qwen2_1536_static_cache_decode_b4,"
                                         "lg_gpt2_1024_prefill_256_fp16,"
                                         "lg_static_draft_beside_target_decodes,"
                                         "lg_attention_lane_beside_mlp_lane_fp16,"
                                         "lg_cupy_row_l2_normalise"),
    ("heldout83", "heldout_83_walks.py", "lh_vit_768_encoder_b4_fp16,"
                                         "lh_mistral_1024_static_cache_decode_b8,"
                                         "lh_phi3_1536_static_cache_decode_b1,"
                                         "lh_image_tower_beside_text_tower,"
                                         "lh_two_static_decode_replicas_b2,"
                                         "lh_cupy_column_logsumexp"),
    ("heldout84", "heldout_84_walks.py", "li_qwen3_1024_static_cache_decode_b2,"
                                         "li_starcoder2_1024_prefill_128_fp16,"
                                         "li_top_p_sampling_b8,"
                                         "li_three_medusa_heads_bf16,"
                                         "li_prefill_chunk_beside_static_decode_b4,"
                                         "li_cupy_user_kernels"),
    ("heldout85", "heldout_85_walks.py", "lj_llama_2048_22_layers_static_cache_decode_b1,"
                                         "lj_qwen2_1536_static_cache_decode_b16,"
                                         "lj_routed_expert_lanes_bf16,"
                                         "lj_embedding_bags_beside_static_decode,"
                                         "lj_rotary_norm_lanes_fp16,"
                                         "lj_cupy_tiled_transpose"),
    ("heldout86", "heldout_86_walks.py", "lk_mistral_4096_2_layers_static_cache_decode_b1,"
                                         "lk_llama_1024_static_cache_decode_b64,"
                                         "lk_gemma_2048_static_cache_decode_b4,"
                                         "lk_projector_beside_static_decode,"
                                         "lk_dlrm_embedding_lanes_and_mlps,"
                                         "lk_cupy_fused_layers"),
    ("heldout87", "heldout_87_walks.py", "lm_llama_1024_long_static_cache_decode_b1,"
                                         "lm_qwen2_1536_static_cache_prefill_chunk_512,"
                                         "lm_phi3_3072_2_layers_static_cache_decode_b2,"
                                         "lm_three_static_decode_replicas_b1,"
                                         "lm_cache_offload_beside_static_decode,"
                                         "lm_cupy_raw_row_softmax"),
    ("heldout88", "heldout_88_walks.py", "ln_olmo2_2048_static_cache_decode_b1,"
                                         "ln_granite_2048_static_cache_decode_b16,"
                                         "ln_roberta_768_encoder_b8_seq128_fp16,"
                                         "ln_four_qwen3_static_decode_replicas_b1,"
                                         "ln_gemms_beside_norm_gelu_lane_fp16,"
                                         "ln_cupy_raw_smoothing"),
    ("heldout89", "heldout_89_walks.py", "lo_phi_2560_static_cache_decode_b4_fp16,"
                                         "lo_tiny_llama_256_8_layers_static_cache_decode_b1,"
                                         "lo_bart_768_decoder_b4_tgt32_src256_fp16,"
                                         "lo_lora_adapters_beside_base_projection_bf16,"
                                         "lo_cache_prefetch_beside_static_decode,"
                                         "lo_cupy_histogram_scan"),
    ("heldout90", "heldout_90_walks.py", "lp_cupy_matrix_reductions_rereading_24mib,"
                                         "lp_cupy_streaming_fma_64mib_vectors,"
                                         "lp_cupy_trig_iterations_compute_bound,"
                                         "lp_cupy_gemm_bias_relu_chain_f32,"
                                         "lp_qwen2_1536_static_cache_decode_b2_bf16,"
                                         "lp_two_lanes_of_linear_layers_fp16"),
    ("heldout91", "heldout_91_walks.py", "lq_cupy_small_vector_rounds_4mib,"
                                         "lq_cupy_add_over_fresh_8mib_slices,"
                                         "lq_cupy_stencil_ping_pong_8mib,"
                                         "lq_cupy_row_sums_of_one_8mib_matrix,"
                                         "lq_llama_2048_4_layers_static_cache_decode_b8_fp16,"
                                         "lq_two_lanes_of_elementwise_bf16"),
    ("heldout92", "heldout_92_walks.py", "lr_cupy_row_maxima_of_one_8mib_matrix,"
                                         "lr_cupy_scale_over_fresh_16mib_slices,"
                                         "lr_cupy_fir_ping_pong_4mib,"
                                         "lr_cupy_fma_chains_compute_bound,"
                                         "lr_decode_linear_chain_4096_bf16,"
                                         "lr_qwen3_1024_static_cache_decode_b32_bf16"),
    ("heldout93", "heldout_93_walks.py", "ls_compiled_decoder_stack_b8_bf16,"
                                         "ls_phi3_static_cache_decode_b4_bf16,"
                                         "ls_qwen2_prefill_512_bf16,"
                                         "ls_cupy_small_grid_rounds_256kib,"
                                         "ls_cupy_row_sums_of_eight_sizes,"
                                         "ls_llama_decode_beside_top_p_filter_bf16"),
    ("heldout94", "heldout_94_walks.py", "lt_two_lanes_of_scale_adds_fp16_2m,"
                                         "lt_three_lanes_of_multiplies_bf16_1m,"
                                         "lt_four_lanes_of_clamp_sqrt_f32_512k,"
                                         "lt_two_lanes_of_gelu_adds_bf16_4m,"
                                         "lt_unequal_lanes_of_scale_adds_fp16,"
                                         "lt_two_lanes_of_tiny_adds_fp16"),
    ("heldout95", "heldout_95_walks.py", "lu_four_lanes_of_addcmuls_f32_256k,"
                                         "lu_three_lanes_of_in_place_scales_fp16_1m,"
                                         "lu_two_lanes_of_where_selects_bf16_1m,"
                                         "lu_four_lanes_of_casts_fp16_f32_512k,"
                                         "lu_four_lanes_of_lerps_f32_256k,"
                                         "lu_two_lanes_of_row_adds_f32_1m"),
    ("heldout96", "heldout_96_walks.py", "lv_three_lanes_of_gelu_adds_bf16_4m,"
                                         "lv_two_lanes_of_addcmuls_f32_2m,"
                                         "lv_four_lanes_of_scale_adds_fp16_2m,"
                                         "lv_two_lanes_of_lerps_f32_4m,"
                                         "lv_six_lanes_of_multiplies_bf16_1536k,"
                                         "lv_two_lanes_of_swiglu_products_bf16_2k_by_4k"),
    ("heldout97", "heldout_97_walks.py", "lw_three_lanes_of_addcmuls_bf16_4m,"
                                         "lw_two_lanes_of_clamp_sqrt_f32_4m,"
                                         "lw_four_lanes_of_multiplies_f32_2m,"
                                         "lw_two_lanes_of_where_selects_fp16_8m,"
                                         "lw_three_lanes_of_scale_adds_bf16_4m,"
                                         "lw_two_lanes_of_lerps_bf16_8m"),
    ("heldout98", "heldout_98_walks.py", "lx_two_lanes_of_masked_fills_fp16_8m,"
                                         "lx_three_lanes_of_nan_selects_f32_2m,"
                                         "lx_four_lanes_of_nonzero_scales_f32_512k,"
                                         "lx_two_lanes_of_signed_steps_bf16_4m,"
                                         "lx_three_lanes_of_band_masks_fp16_1m,"
                                         "lx_four_lanes_of_floor_fills_bf16_4m"),
    ("heldout99", "heldout_99_walks.py", "ly_four_lanes_of_positive_parts_bf16_1m,"
                                         "ly_three_lanes_of_half_round_trips_f32_512k,"
                                         "ly_two_lanes_of_masked_zeros_fp16_1m,"
                                         "ly_six_lanes_of_clamp_scales_bf16_512k,"
                                         "ly_four_lanes_of_abs_adds_fp16_256k,"
                                         "ly_two_lanes_of_sigmoid_scales_f32_1m"),
    ("heldout100", "heldout_100_walks.py", "lz_two_lanes_of_row_and_column_bf16_1k_by_1k,"
                                           "lz_three_lanes_of_column_adds_f32_512_by_1k,"
                                           "lz_four_lanes_of_transposed_means_fp16_512,"
                                           "lz_two_lanes_of_maxima_bf16_2m,"
                                           "lz_six_lanes_of_bias_gelus_f32_256_by_512,"
                                           "lz_four_lanes_of_first_column_scales_fp16_2k_by_512"),
    ("heldout101", "heldout_101_walks.py", "ma_three_lanes_of_transposed_adds_fp16_768,"
                                           "ma_four_lanes_of_transposed_copies_bf16_1k_by_512,"
                                           "ma_three_lanes_of_plane_transposes_f32_64_cubed,"
                                           "ma_four_lanes_of_lerps_bf16_512k,"
                                           "ma_two_lanes_of_where_blends_fp16_1m,"
                                           "ma_four_lanes_of_strided_half_adds_bf16_1k_by_512"),
    ("heldout102", "heldout_102_walks.py", "mb_two_gelu_lanes_beside_gemv_lane_bf16,"
                                           "mb_three_silu_lanes_beside_wide_gemv_lane_fp16,"
                                           "mb_layernorm_lane_beside_two_gemv_lanes_bf16,"
                                           "mb_two_rmsnorm_lanes_beside_two_gemv_lanes_fp16,"
                                           "mb_four_scale_lanes_f32_beside_gemv_lane_bf16,"
                                           "mb_two_wide_scale_lanes_beside_gemv_lane_bf16"),
    ("heldout103", "heldout_103_walks.py", "mc_two_lanes_of_transposed_adds_f32_768,"
                                           "mc_four_lanes_of_transposed_products_bf16_512,"
                                           "mc_three_lanes_of_plane_transposes_fp16_16_by_256,"
                                           "mc_six_lanes_of_transposed_differences_f32_256,"
                                           "mc_transposed_lane_beside_row_lane_fp16_1k,"
                                           "mc_two_lanes_of_transposed_adds_bf16_1536"),
    ("heldout104", "heldout_104_walks.py", "md_three_lanes_of_nan_selects_f32_4m,"
                                           "md_two_lanes_of_finite_selects_bf16_8m,"
                                           "md_four_lanes_of_nan_masks_fp16_1m,"
                                           "md_two_lanes_of_finite_scales_f32_1m,"
                                           "md_nan_select_lane_beside_add_lane_f32_8m,"
                                           "md_three_lanes_of_self_products_bf16_4m"),
    ("heldout105", "heldout_105_walks.py", "me_three_lanes_of_one_block_multiplies_bf16_512,"
                                           "me_five_lanes_of_scale_adds_fp16_4k,"
                                           "me_two_lanes_of_silu_f32_16k,"
                                           "me_four_lanes_of_row_norms_fp16_2_by_4096,"
                                           "me_three_lanes_of_pair_span_adds_f32_128k,"
                                           "me_tiny_add_lanes_beside_wide_add_lanes_f32"),
    ("heldout106", "heldout_106_walks.py", "mf_two_long_lanes_of_one_block_multiplies_bf16_512,"
                                           "mf_three_short_lanes_of_scale_adds_fp16_4k,"
                                           "mf_four_lanes_of_silu_f32_16k,"
                                           "mf_two_very_short_lanes_of_adds_f32_1k,"
                                           "mf_five_long_lanes_of_gelu_bf16_2k,"
                                           "mf_long_add_lane_beside_short_add_lane_f32_4k"),
]
