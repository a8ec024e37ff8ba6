/*
 * test_vmshare.c - vmm_vm_create_sharing and vmm_vm_destroy over a fake
 * backend (backend.c's part, no KVM): a sharer runs on its owner's address
 * space, a sharer of a sharer on the owner's, and an owner destroyed while
 * sharers remain is kept (retired) until the last of them is destroyed; a
 * backend that cannot share leaves no VM and no count behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "backend_impl.h"

static int destroyed;
static int share_result;

static int fake_create(struct vmm_host *host, struct vmm_vm **out,
                       char *why, size_t why_len);
static void fake_destroy(struct vmm_vm *vm)
{
    destroyed++;
    free(vm);
}
static int fake_share(struct vmm_vm *vm, struct vmm_vm *owner)
{
    (void)vm;
    (void)owner;
    return share_result;
}

static const struct vmm_backend_ops fake_ops = {
    .name = "fake",
    .vm_create = fake_create,
    .vm_destroy = fake_destroy,
    .vm_share = fake_share,
};

static int fake_create(struct vmm_host *host, struct vmm_vm **out,
                       char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    struct vmm_vm *vm = calloc(1, sizeof(*vm));
    if (!vm)
        return -ENOMEM;
    vm->ops = &fake_ops;
    vm->host = host;
    *out = vm;
    return 0;
}

static struct vmm_host host = {.ops = &fake_ops};

static void init(void)
{
    destroyed = 0;
    share_result = 0;
}

TestSuite(vmshare, .init = init);

Test(vmshare, a_sharer_runs_on_the_owners_space)
{
    struct vmm_vm *owner, *child, *grandchild;
    char why[128];
    cr_assert_eq(vmm_vm_create(&host, &owner, why, sizeof(why)), 0);
    cr_assert_eq(vmm_vm_create_sharing(&host, owner, &child, why,
                                       sizeof(why)),
                 0);
    cr_assert_eq(vmm_vm_aspace(child), vmm_vm_aspace(owner));
    cr_assert_eq(vmm_vm_create_sharing(&host, child, &grandchild, why,
                                       sizeof(why)),
                 0);
    cr_assert_eq(grandchild->memory_vm, owner, "a sharer's sharer shares "
                                               "with the owner");
    cr_assert_eq(owner->memory_users, 2);
    vmm_vm_destroy(grandchild);
    vmm_vm_destroy(child);
    cr_assert_eq(destroyed, 2);
    cr_assert_eq(owner->memory_users, 0);
    vmm_vm_destroy(owner);
    cr_assert_eq(destroyed, 3);
}

Test(vmshare, an_owner_destroyed_first_waits_for_its_last_sharer)
{
    struct vmm_vm *owner, *a, *b;
    cr_assert_eq(vmm_vm_create(&host, &owner, NULL, 0), 0);
    cr_assert_eq(vmm_vm_create_sharing(&host, owner, &a, NULL, 0), 0);
    cr_assert_eq(vmm_vm_create_sharing(&host, owner, &b, NULL, 0), 0);
    vmm_vm_destroy(owner);
    cr_assert_eq(destroyed, 0, "the memory is still a's and b's");
    cr_assert(owner->retired);
    vmm_vm_destroy(a);
    cr_assert_eq(destroyed, 1);
    vmm_vm_destroy(b);
    cr_assert_eq(destroyed, 3, "b, then the retired owner with it");
}

Test(vmshare, a_failed_share_leaves_nothing)
{
    struct vmm_vm *owner, *child = NULL;
    char why[128] = "";
    cr_assert_eq(vmm_vm_create(&host, &owner, NULL, 0), 0);
    share_result = -EMFILE;
    cr_assert_eq(vmm_vm_create_sharing(&host, owner, &child, why,
                                       sizeof(why)),
                 -EMFILE);
    cr_assert_eq(destroyed, 1, "the VM made for it is gone");
    cr_assert_eq(owner->memory_users, 0);
    cr_assert_str_neq(why, "");
    vmm_vm_destroy(owner);
    cr_assert_eq(destroyed, 2);
}
