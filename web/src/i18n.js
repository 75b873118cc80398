// The UI's words for the assistant, as data: English and Chinese. The
// language follows the browser's (navigator.languages); t(key, ...args)
// fills {0}, {1}… A key missing in Chinese falls back to English.
const WORDS = {
  en: {
    panelTitle: 'AI · Versions', openPanel: 'AI · 版本', closePanel: 'Close',
    session: 'Session', newSession: 'New', untitled: 'Untitled session', messages: '{0} messages', message1: '1 message',
    personalization: 'Personalization', none: 'None', persona: 'Persona', writingPreset: 'Writing preset', editingPreset: 'Editing preset',
    choose: '— none —', clearChoice: 'Clear',
    offlineNote: 'No model provider is configured: the offline provider edits by rules only. Options marked “needs a model provider” will propose no change.',
    needsProvider: 'needs a model provider', editsOffline: 'edits offline',
    conversation: 'Conversation', noMessages: 'No messages yet in this session.',
    you: 'You', assistant: 'Assistant', sourceToggle: 'The text as it was then', sourceError: 'The original text could not be rebuilt: {0}',
    instruction: 'Instruction', instructionHint: 'What should the assistant do?', ask: 'Ask', scope: 'Scope',
    scopeDocument: 'the whole document', scopeBlock: 'this block', scopeSection: 'this section', scopeSelection: 'the selection',
    scopeReset: 'Whole document',
    run: 'Request', cancel: 'Cancel',
    state_queued: 'Queued', state_running: 'Working…', state_retrying: 'Retrying', state_succeeded: 'Done', state_failed: 'Failed', state_cancelled: 'Cancelled',
    ev_queued: 'queued', ev_started: 'attempt {0} started', ev_progress: 'receiving the answer…', ev_retry: 'retry after {0} s: {1}',
    ev_recovered: 'recovered after a restart', ev_interrupted: 'interrupted; queued again', ev_cancel_requested: 'cancel requested',
    ev_succeeded: 'finished', ev_failed: 'failed', ev_cancelled: 'cancelled',
    noChange: 'No change proposed: {0}', failedBecause: 'The request failed: {0}',
    suggestion: 'Suggestion', pinned: 'Using {0}', accept: 'Accept', reject: 'Reject',
    proposedByAgent: 'Proposed by agent {0}', agentOf: 'token {0} of {1}', unnamedAgent: 'unnamed client',
    conflicted: 'This suggestion no longer applies: {0}', conflictedShort: 'Conflicted', accepted: 'Accepted as {0}', rejected: 'Rejected',
    confirmDelete: 'This suggestion deletes blocks. Accept it and delete them?',
    blockMenu: 'Block actions', askBlock: 'Ask AI about this block', askSection: 'Ask AI about this section',
    toolbar: 'Ask AI about the selection', improve: 'Improve', shorten: 'Shorten', expand: 'Expand', freeInstruction: 'Instruction for the selection',
    tpl_improve: 'Improve the wording in plain language with stronger verbs; keep its facts, views and voice.',
    tpl_shorten: 'Make this passage more concise; keep its facts, views and voice.',
    tpl_expand: 'Expand this passage with more detail; keep its facts, views and voice.',
    previewLabel: 'Suggested change (not applied yet)',
    compareTitle: 'Whole-document suggestion', compareCurrent: 'Current', compareProposed: 'Proposed',
    compareNote: '{0} blocks changed, {1} unchanged. Not applied until you accept it.', compareConflicted: 'The document changed since this suggestion was made: it cannot be accepted.',
    compareAdded: '(new block)', compareRemoved: '(block removed)',
    err_quota: 'the writing quota is used up for now', err_unreachable: 'the model provider could not be reached', err_grounding: 'the answer stated things about you that your sources do not support',
    err_unauthorized: 'the model provider refused the credentials', err_invalid: 'the model answered something that is not a valid edit',
  },
  zh: {
    panelTitle: 'AI · 版本', closePanel: '关闭',
    session: '会话', newSession: '新建', untitled: '未命名会话', messages: '{0} 条消息', message1: '1 条消息',
    personalization: '个性化', none: '无', persona: '人设', writingPreset: '写作预设', editingPreset: '编辑预设',
    choose: '— 不选 —', clearChoice: '清除',
    offlineNote: '未配置模型服务：离线服务只按规则编辑。标注“需要模型服务”的选项不会提出修改。',
    needsProvider: '需要模型服务', editsOffline: '可离线编辑',
    conversation: '对话', noMessages: '本会话还没有消息。',
    you: '你', assistant: '助手', sourceToggle: '当时的原文', sourceError: '无法还原原文：{0}',
    instruction: '指令', instructionHint: '想让助手做什么？', ask: '提问', scope: '范围',
    scopeDocument: '整篇文章', scopeBlock: '这个段落', scopeSection: '这一节', scopeSelection: '所选文字',
    scopeReset: '整篇文章',
    run: '请求', cancel: '取消',
    state_queued: '排队中', state_running: '处理中…', state_retrying: '重试中', state_succeeded: '完成', state_failed: '失败', state_cancelled: '已取消',
    ev_queued: '已排队', ev_started: '第 {0} 次尝试开始', ev_progress: '正在接收回答…', ev_retry: '{0} 秒后重试：{1}',
    ev_recovered: '重启后恢复', ev_interrupted: '被中断，已重新排队', ev_cancel_requested: '已请求取消',
    ev_succeeded: '结束', ev_failed: '失败', ev_cancelled: '已取消',
    noChange: '未提出修改：{0}', failedBecause: '请求失败：{0}',
    suggestion: '建议', pinned: '使用 {0}', accept: '接受', reject: '拒绝',
    proposedByAgent: '由智能体 {0} 提出', agentOf: '{1} 的令牌 {0}', unnamedAgent: '未命名客户端',
    conflicted: '此建议已不再适用：{0}', conflictedShort: '已冲突', accepted: '已接受为 {0}', rejected: '已拒绝',
    confirmDelete: '此建议会删除段落。接受并删除吗？',
    blockMenu: '段落操作', askBlock: '就此段落询问 AI', askSection: '就此节询问 AI',
    toolbar: '就所选文字询问 AI', improve: '改善表达', shorten: '精简', expand: '扩写', freeInstruction: '对所选文字的指令',
    tpl_improve: '改善这段文字的表达：更简洁，用有力的动词，保留事实、观点和作者声音。',
    tpl_shorten: '精简这段文字，保留事实、观点和作者声音。',
    tpl_expand: '扩写这段文字，补充细节，保留事实、观点和作者声音。',
    previewLabel: '建议的修改（尚未应用）',
    compareTitle: '全文建议', compareCurrent: '当前', compareProposed: '建议',
    compareNote: '修改 {0} 个块，{1} 个未变。接受之前不会应用。', compareConflicted: '文档在此建议之后已被修改：无法接受。',
    compareAdded: '（新块）', compareRemoved: '（删除此块）',
    err_quota: '写作额度暂时用完', err_unreachable: '无法连接模型服务', err_grounding: '回答中有关于你的说法无法从资料中得到支持',
    err_unauthorized: '模型服务拒绝了凭据', err_invalid: '模型的回答不是有效的修改',
  },
};

export function uiLang() {
  const langs = (globalThis.navigator && (navigator.languages || [navigator.language])) || [];
  for (const l of langs) {
    const k = String(l || '').toLowerCase().split('-')[0];
    if (WORDS[k]) return k;
  }
  return 'en';
}

export function t(key, ...args) {
  const lang = uiLang();
  let s = (WORDS[lang] && WORDS[lang][key]) ?? WORDS.en[key] ?? key;
  args.forEach((a, i) => { s = s.replace(`{${i}}`, String(a)); });
  return s;
}

export const translations = WORDS;
