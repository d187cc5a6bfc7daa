/* Entry point of libskein-ucx.so, the transport as libskein dlopens it in multi-process
 * jobs. The only exported symbol of the module. */
#include "net.h"

__attribute__((visibility("default"))) const skn_net_module skn_net_module_v1 = {
    .abi = SKN_NET_MODULE_ABI,
    .init = skn_net_init,
    .send = skn_net_send,
    .ack = skn_net_ack,
    .cancel = skn_net_cancel,
    .control = skn_net_control,
    .fetch = skn_net_fetch,
    .discard = skn_net_discard,
    .progress = skn_net_progress,
    .event_fd = skn_net_event_fd,
    .arm = skn_net_arm,
    .get_stats = skn_net_get_stats,
    .finalize = skn_net_finalize,
    .mem_map = skn_net_mem_map,
    .mem_unmap = skn_net_mem_unmap,
    .rkey_unpack = skn_net_rkey_unpack,
    .rkey_destroy = skn_net_rkey_destroy,
    .put = skn_net_put,
    .get = skn_net_get,
    .atomic = skn_net_atomic,
    .flush = skn_net_flush,
};
