"""Tier 1: the docs/ROUTING.md rules as patterns, in the contract's order, firing only when sure.

Each rule pairs the words that make a route (a code verb with a code object, a data file, a
launch word with a measuring verb …) with the words that would contradict it (advice, a
collection request, an attribution request). A rule that sees a contradiction stays silent and
leaves the message to the classifier: a rule's job is precision, the classifier's is coverage.
The patterns name kinds of words, never sentences from the labelled set.

Patterns that take a run of word characters start only at the edge of that run (a match that
starts inside it would have been found one character earlier): without that lookbehind every
position of one long word rescans the rest of it, and a megabyte took hours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from graph.enums import Route
from nodes.routing.normalize import DATA_EXT, SOURCE_EXT, routing_view
from nodes.routing.scope import Scope, split_scope


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I | re.S)


# --- vocabulary ------------------------------------------------------------------------------

#: A file of collected performance data (trace, profile, dump, table of numbers).
DATA_FILE = _rx(rf"(?<![\w./-])[\w./-]*\w\.(?:{DATA_EXT})(?![\w-])")
#: A source or config file.
SOURCE_FILE = _rx(rf"(?<![\w./-])[\w./-]*\w\.(?:{SOURCE_EXT})(?![\w.-])")
PACKAGE = _rx(r"(?<![\w./-])[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){2,}(?![\w-])")

#: Code and where code lives.
CODE_OBJECT = (
    r"(?:源码|源碼|原始碼|代码|代碼|程式碼|程序码|code\s?base|\bcode\b|\bsource\b|\brepo\b|仓库|倉庫|"
    r"函数|函數|\bfunction\b|\bclass\b|类|類|实现|實作|實現|定义|定義|\bdefin\w+|\bimplementation\b|"
    r"调用|調用|呼叫|call\s?sites?|\busages?\s+of\b|脚本|腳本|\bscripts?\b|\bfile\b|文件|檔案|\bmodule\b|模块|"
    r"\bfolder\b|目录|\bmanifest\b|\bgradle\b)"
)
#: Verbs that search or read.
CODE_VERB = (
    r"(?:\bgrep\b|\brg\s+-|搜索|搜尋|搜寻|搜一?下|\b搜\b|搜|\bsearch\b|\bfind\b|\blook\s+(?:up|through|for)|"
    r"找一?下|找找|找出|找一找|搵|翻一?下|翻出|翻翻|翻|\bopen\b|打开|打開|查看文件|\bread\b|读一?下|讀|"
    r"\bshow\s+me\b|看一?下|看看|睇下|\bwhere\b|在哪|喺邊|哪个文件|哪個檔|which\s+(?:file|module|folder))"
)
#: Asking for the cause to be pinned on code (the whole pipeline, not a code search).
ATTRIBUTION = _rx(
    r"导致|導致|造成|归因|歸因|定位到|\bblame|\bguilty|responsible|\battribut|\bbottleneck|瓶颈|"
    r"慢在|慢喺|卡在|where\s+the\s+time\s+goes|为啥卡|為什麼卡|\bwhy\b.{0,30}\b(?:slow|laggy|jank|stutter)|"
    r"\bmap\w*\s+(?:\w+\s+){0,2}to\s+(?:source|code|functions?)|\bhot\s+frames|热点函数|"
    r"(?:为什么|為什麼|为啥|為啥|咋|怎么会|怎麼會)(?:会|會)?.{0,12}(?:卡|掉帧|掉幀|慢|顿|頓|发热|發熱|耗电|耗電|lag|jank)|"
    r"\bwhich\s+(?:functions?|methods?|code)\s+(?:is|are|makes?|causes?)\b|"
    r"(?:为什么|為什麼|为啥|為啥)[^，,。?？]{0,12}(?:slow|laggy|janky|stutter)"
)
#: A request to go and find the cause (with ATTRIBUTION and a target: "find out why it is slow"
#: on an app or program is ``full_analysis``, docs/ROUTING.md rule 5).
INVESTIGATE = _rx(
    r"帮我|幫我|幫手|帮忙|幫忙|请|請|麻烦|麻煩|分析|查|找|排查|\bfind\s+out|\bfigure\s+out|\bdig\b|\binvestigat|"
    r"\blook\s+into|\btell\s+me\s+why|\bprofile\b|\btrack\s+(?:it\s+)?down"
)
#: A how-to question at the start of the message ("how do I measure cold start?", "怎么测 FPS"):
#: asking for the method, not for a measurement (docs/ROUTING.md rule 4).
HOWTO = _rx(
    r"^\W*(?:how\s+(?:do|can|should|would)\s+(?:i|we|you|one)\b|how\s+to\b|(?:请问|請問)?(?:怎么|怎麼|如何|点样|點樣)"
    r"(?!这么|這麼|回事|了|样了|樣了|搞的))"
)
#: Asking what a number should be ("FPS 目标定多少合适", "多少算流畅", "what should the frame budget
#: be"): advice about a threshold, although "多少" is also a measuring word.
TARGET_QUESTION = _rx(
    r"(?:定|设|設|要)?多少(?:才)?(?:合适|合適|算|比较好|比較好|为宜|為宜)|多少算|"
    r"\bwhat\s+should\s+(?:the|my|our|a)\s+(?:\w+\s+){0,2}(?:target|budget|threshold|limit)\b|"
    r"\bwhat(?:'s|\s+is)\s+a\s+(?:good|reasonable|acceptable)\b|"
    # judging a value one already has: "is 45 fps bad?", "200 ms 的启动算慢吗"
    r"^\W*(?:is|are)\s+(?:a\s+|an\s+)?[\d.]+\s*(?:ms|s|fps|hz|mb|gb|%)?\s+(?:\w+\s+){0,2}"
    r"(?:bad|good|ok|okay|normal|acceptable|enough|fine|too\s+(?:slow|high|low|much))\b|"
    r"[\d.]+\s*(?:ms|s|fps|hz|mb|gb|%|毫秒|秒|帧)?\s*(?:的\S{0,6})?算(?:不算)?(?:慢|快|卡|流畅|流暢|正常|高|低)"
)
#: Advice words that stay advice with an app named ("com.demo.shop 的 FPS 怎么提升?").
STRONG_ADVICE = _rx(
    r"建议|建議|(?:怎么|怎麼|如何)(?:才能)?(?:优化|優化|提升|提高|改善|减少|減少|降低|解决|解決|避免)|"
    r"\bhow\s+(?:do|can|should)\s+(?:i|we)\s+(?:improve|optimi[sz]e|speed\s+up|reduce|fix|cut|lower|avoid)|"
    r"\btips\b|\bbest\s+practices?"
)

#: Words that point at data which already exists.
EXISTING_DATA = _rx(
    r"这份|這份|那份|嗰份|刚才|剛才|刚刚|剛剛|頭先|刚抓|刚采|刚测|刚跑|刚 collect|上周那|昨晚|"
    r"我上传|上傳|上传的|发来|發來|贴给你|我贴|貼給|我导出|我導出|"
    r"\b(?:the|this|that)\s+(?:trace|profile|capture|systrace|flame\s?graph)\b"
    r"(?!\s+(?:of|for|while|during))|"
    r"\bi\s+(?:just\s+|already\s+|have\s+|'ve\s+)?(?:sent|attached|uploaded|captured|pulled|exported|pasted|ran)\b|"
    r"\b(?:you|we)\s+just\s+(?:took|captured|collected|ran|measured)|\bjust\s+(?:captured|collected|pulled)|"
    r"\bfrom\s+earlier\b|\bearlier\b|\bpasted\b|\balready\s+(?:have|collected)|"
    r"\b(?:i|you)\s+attached|\battached\s+(?:\S+\.\w+|trace|profile|file|capture|dump|flame)|"
    r"(?:trace|profile|file|capture|graph)\s+i\s+attached|"
    r"(?:这个|這個|那个|那個)\s*(?:trace|profile|capture|dump|火焰图|火焰圖|数据|數據)|"
    r"上次(?:测|測|采|採|抓|跑|量)的|(?:这|這|那)(?:两|兩|几|幾)(?:次|份|个|個)|(?:采集|採集|抓|录|錄)(?:到)?的(?:数据|數據|结果|結果|trace)|上次的(?:结果|結果|数据|數據|trace)|上一次(?:测|測|采|採|跑)的|"
    r"\blast\s+time\s+(?:you|we|i)\s+(?:measured|ran|captured|collected|recorded)"
)
#: Existing-data cues that a request for new data can also use ("start recording the trace",
#: "like I said earlier, measure …"): next to such a request the rule cannot tell.
WEAK_EXISTING = _rx(
    r"^(?:(?:the|this|that)\s+(?:trace|profile|capture|systrace|flame\s?graph)|earlier|昨晚|上周那)$"
)
#: Asking for fresh data although old data exists.
FRESH = _rx(
    r"\bfresh\b|don'?t\s+reuse|重新|再测|再測|再量|再跑|再采|再採|再抓|\bre-?(?:measure|run|collect|capture|record)\b|"
    r"\bagain\b|\bnew\s+(?:capture|trace|run|measurement|profile)"
)
#: A comparison with a run or capture that already exists ("和上次比变快了吗", "better than the
#: previous run?"): existing data, so ``analyze`` (docs/ROUTING.md rule 2) unless new data is asked for.
COMPARE_PREVIOUS = _rx(
    r"(?:和|跟|与|與|同|比|对比|對比|相比)\s*(?:上次|上一次|上一轮|上一輪|之前|以前|前一次|昨天|昨晚|上周|上週|上个版本|上個版本|"
    r"上一版|旧版|舊版|老版本)|(?:上次|上一次|之前)(?:那次|那份|的结果|的結果|的数据|的數據)?(?:比|相比|对比|對比)|"
    r"变快了吗|變快了嗎|变慢了吗|變慢了嗎|有没有变快|有沒有變快|有没有变慢|有沒有變慢|快了没|快了沒|有没有改善|有沒有改善|"
    r"\b(?:than|vs\.?|versus|to|with|against)\s+(?:the\s+)?(?:previous|last|prior|earlier|yesterday'?s?|old|baseline)\s+"
    r"(?:run|capture|trace|one|build|time|measurement|results?|numbers|profile|version)\b|"
    r"\b(?:previous|last)\s+(?:run|capture|measurement)\b|\bthan\s+before\b|\bany\s+(?:better|faster)\s+now\b"
)
#: Two folders set against each other ("compare run_a/ with run_b/", 「对比一下 runs/main/ 和
#: runs/pr/」, "diff before/ and after/"): the runs of two captures, existing data (docs/ROUTING.md
#: rule 2: "including comparing two captures or runs"). A folder is a side only with the
#: trailing slash that marks it as one; code folders are the explorer's ("compare the code in
#: src/ with lib/" has a code noun, rule 1, checked first).
_FOLDER = r"(?<![\w./-])[\w.-][\w./-]*/(?![\w.-])"
COMPARE_SIDES = _rx(
    rf"(?:\b(?:compare|diff|contrast)\b|对比|對比|比较|比較|比对|比對)\s*(?:一下)?\s*(?:the\s+runs?\s+(?:in\s+)?)?{_FOLDER}"
    rf"\s*(?:\b(?:with|and|to|against|vs\.?|versus)\b|和|跟|与|與|同|及)\s*{_FOLDER}|"
    rf"{_FOLDER}\s*(?:\bvs\.?|\bversus\b|对比|對比)\s*{_FOLDER}"
)
#: A request to produce data (then the file named is a destination, not an input).
COLLECT_VERB = _rx(
    r"\bcollect\b|\bcapture\b|\brecord\b|\bstore\s+(?:it\s+)?(?:under|in|to)\b|\bwrite\s+it\s+to\b|"
    r"采集|採集|重新采|抓一份|录一段|錄一段|输出到|保存到|存到"
)
#: Launch / start-up vocabulary.
LAUNCH = _rx(
    r"冷启动|冷啟動|热启动|熱啟動|温启动|溫啟動|启动|啟動|起動|启东|开起来|開起來|首帧|首幀|首屏|秒开|"
    r"\bcold[\s-]?(?:start|launch|strat)|\bwarm[\s-]?(?:start|launch)|\bhot[\s-]?start|"
    r"\blaunch(?:es|ing)?\b|\bstart[\s-]?up\b|\bstarts?\s+up\b|\bboots?\b|\bttid\b|\bttfd\b|"
    r"time\s+to\s+(?:first|initial|full)\s+(?:frame|display)|\bsplash|am\s+start|"
    r"slow\s+to\s+open|takes?\s+(?:\w+\s+){0,3}to\s+(?:start|open|launch)"
)
NOT_LAUNCH = _rx(r"not\s+about\s+(?:the\s+)?launch|不是启动|不是啟動|非启动")
#: A verb that asks for a measurement or an investigation to be made.
MEASURE = _rx(
    r"测|測|量|\bmeasure|\bmesure|\btime\s+(?:it|the|how)|\bhow\s+long|多久|几秒|幾秒|幾耐|要几|"
    r"耗时|耗時|\bprofile\b|\bprofiling|抓|\brecord|\bcapture|\bsystrace|\btrace\b|\bbenchmark|"
    r"\bcheck\b|\bcompare|对比|對比|\bregression|\bp[59]0\b|\biterations?\b|\bruns\b|x\d+|"
    r"分析|剖析|\banaly[sz]|\bbreak\s?down|\bfind\s+out|\bfigure\s+out|查|排查|\blook\s+into|\bdig|"
    r"采|採|录|錄|\bcollect|\bgrab|\bdump|\bsample|\bmonitor|\blog\b|\bread\b|\bpull|\btake\b|"
    r"\bshow\s+me|\blist\b(?=\s+(?:(?:the|all|my|our|every|connected|attached|running|installed)\s+)*(?:devices?|phones?|emulators?|process(?:es)?|threads?|packages?|apps?|connected|running))|\btrack|看看|看下|看一下|睇下|\bwhat'?s\s+(?:the\s+)?current|多少|占用|佔用|用量|"
    r"\bgive\s+me|\bget\s+me|\bre-?measure|\bverify|\bconfirm|"
    r"\bwhat\s+is\s+(?:the\s+|my\s+|our\s+)?current|\bright\s+now\b|\bat\s+the\s+moment\b|现在|現在|目前|当前|當前|实时|實時"
)
#: Asking how, why in general, or for advice (docs/ROUTING.md rule 4).
ADVICE = _rx(
    r"怎么|怎麼|怎样|怎樣|如何|点样|點樣|点算|點算|咋整|咋办|为什么会|為什麼會|为啥会|一般|通常|常见|常見|"
    r"建议|建議|最佳实践|最佳實踐|手段|思路|推荐|推薦|值不值|值唔值|有帮助|有幫助|是什么|是啥|什么意思|"
    r"什麼意思|啥意思|区别|區別|差在哪|差别|哪个好|哪个.*更好|选哪|多少算|算流畅|教学|教學|"
    r"\bhow\s+(?:do|can|should|to|would)\b|\bwhat\s+(?:is|are|does)\b|\bwhat'?s\s+(?:a|an|the\s+difference)\b|"
    r"\bwhy\s+(?:do|does|is\s+it)\b|\bbest\s+(?:practices?|way)|\btips\b|\badvice\b|\brecommend|"
    r"\bdifference\b|\bexplain\b|\bworth\b|\bvs\.?\b|\bshould\s+i\b|\bis\s+there\s+a\s+way|"
    r"\bcounterpart\b|\bequivalent\s+of\b|\bwhich\s+(?:is|one)\b|\bexactly\?|"
    r"\bmean\b|\bmeans\b|意思|"
    r"\b(?:which|what)\s+(?:command|tool|adb\s+command)s?\b|哪个命令|哪個命令|什么命令|什麼命令|"
    r"用什么工具|用什麼工具|有什么工具|有什麼工具|哪个工具|哪個工具|讲讲|講講|聊聊|介绍一下|介紹一下|"
    r"合适|合適|定多少|多少才|\bwhat\s+should\s+(?:the|my|our|a)\b"
)
#: The whole-pipeline words of docs/ROUTING.md rule 5.
WHOLE = _rx(
    r"全面|完整|整体|整體|全链路|全鏈路|全流程|全套|全量|一条龙|一條龍|从头到尾|從頭到尾|由頭到尾|从头查|"
    r"端到端|体检|體檢|整个|\bend[\s-]to[\s-]end\b|\bfull\s+(?:analysis|report|perf|pipeline|"
    r"attribution|pass)|\bcomplete\b|\bholistic|\btop\s+to\s+bottom|\bwhole\s+(?:thing|pipeline|"
    r"picture|chain)|\bthe\s+works\b|\boverall\b|\ball\s+the\s+way|从采集到|從採集到|采集到报告|"
    r"\bfrom\s+(?:capture|sampling|collect)\w*\s+(?:to|through)|查清楚|找出原因|找出.*原因"
)
#: Whole-pipeline words that cannot mean "all of one metric" ("整个页面的 FPS", "overall CPU",
#: "一份完整的 trace" are one device metric): next to a device metric only these decide.
STRONG_WHOLE = _rx(
    r"全面|端到端|体检|體檢|全链路|全鏈路|全流程|一条龙|一條龍|从头到尾|從頭到尾|由頭到尾|从头查|从采集到|從採集到|采集到报告|"
    r"报告|報告|归因|歸因|\bend[\s-]to[\s-]end\b|\bfull\s+(?:analysis|report|perf|pipeline|attribution|pass)|"
    r"\breport\b|\bpipeline\b|\battribut|\btop\s+to\s+bottom|\bholistic|\bthe\s+works\b|查清楚|找出原因|"
    r"\bfrom\s+(?:capture|sampling|collect)\w*\s+(?:to|through)"
)
_PROGRAM = r"(?:[\w./-]*\w\.(?:py|js|jar|go|apk|x86_64|exe|bin)|[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){2,}|build\s+\d+)"
#: Two programs or apps set against each other ("a.py vs b.py", "v1.apk 和 v2.apk"): with launch
#: words, docs/ROUTING.md's "two programs against each other" (``startup``), never advice.
TWO_TARGETS = _rx(
    rf"(?<![\w./-]){_PROGRAM}(?![\w-])\s*(?:vs\.?|versus|against|and|和|与|與|跟|对|對|比)\s*{_PROGRAM}(?![\w-])"
)
#: A launch word used as the verb of starting the app before something else is measured
#: ("launch the app and record FPS", "启动后测一下内存"): not a launch measurement.
LAUNCH_AS_STEP = _rx(
    r"\blaunch\s+(?:the\s+app|it|com\.)|\b(?:after|once)\s+(?:the\s+)?(?:app\s+)?(?:launch|startup|start-?up|starts?|launches)\b|"
    r"(?:启动|啟動)[^，,。;；]{0,16}?(?:后|後|之后|之後|以后|以後|完|起来后|起來後)"
)
#: Something the pipeline can be pointed at.
TARGET = _rx(
    r"(?<![\w./-])[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){2,}(?![\w-])|(?<![\w./-])[\w./-]+\.(?:py|js|jar|go|apk|x86_64)\b|"
    r"\bapp\b|\bapk\b|页面|頁面|页|頁|\bpage\b|\bscreen\b|\bscene\b|场景|場景|\bflow\b|流程|\bscript\b|脚本|"
    r"\bcli\b|\bprogram\b|程序|游戏|遊戲|\bgame\b|\bservice\b|\bendpoint\b|\bworker\b|\bfeed\b|列表|"
    r"\bbin/\w+|cmd/\w+|services/\w+|\bbuild\s+\d+"
)
#: One thing measured or read on a device (docs/ROUTING.md rule 5, second half).
DEVICE_METRIC = _rx(
    r"\bfps\b|帧率|幀率|掉帧|掉幀|帧|幀|\bjank|\bcpu\b|\bgpu\b|内存|內存|记忆体|記憶體|内纯|\bmemory|meminfo|"
    r"gfxinfo|framestats|frame\s+(?:time|stats|rate|pacing)|\bbattery|batterystats|耗电|耗電|食幾多電|"
    r"\btraces?\b|\bsystrace|\bperfetto|simpleperf|heap\s+dump|\bdevices?\b|设备|設備|裝置|"
    r"连着|連住|连了|adb\s+(?:devices|shell)|\bthermal|温度|\bbinder|\bhitch|\banr\b|dumpsys|\btop\s+-m"
)
GREETING = _rx(
    r"^\W*(?:hi|hey|hello|yo|thanks?(?:\s+you)?|thx|ok(?:ay)?|bye|cool|你好\w{0,2}|您好|在吗|在嗎|"
    r"谢谢\w{0,2}|謝謝\w{0,2}|謝啦|多謝\w{0,2}|好嘞|好的|拜拜)\W*$"
)
#: Runs of spaces and punctuation are taken possessively: the words between them start with a
#: word character, so giving any back never helps, while a greedy ``\W*`` and three ``\s*``
#: split a run of n spaces O(n^4) ways before failing.
VAGUE = _rx(
    r"^\W*+(?:帮我|幫我|帮忙|幫忙|请|請)?\s*+(?:分析|看看|check|检查|檢查)?\s*+(?:一下|下)?\s*+"
    r"(?:性能|效能|performance|perf)\s*+(?:吧|呗|唄)?\W*+$|^\W*+(?:can\s+you\s+)?check\s+(?:the\s+)?"
    r"perf(?:ormance)?\W*+$|^\W*+(?:分析|perf|performance)\W*+$"
)


#: More vague requests (docs/ROUTING.md rule 6) in other word orders; anchored, so linear.
VAGUE_MORE = _rx(
    r"^\W*(?:perf(?:ormance)?\s+check|check\s+(?:my|our|its|the\s+app'?s)\s+perf(?:ormance)?|(?:看看|查查|查一下|檢查一下|检查一下)性能|"
    r"性能(?:检查|檢查|看看|查查)(?:一下)?|how'?s\s+(?:the\s+)?perf(?:ormance)?|(?:is|how\s+is)\s+(?:the\s+)?performance\s+ok)"
    r"(?:\s*(?:pls|please|plz|吧|呗|唄|一下))?\W*$"
)


@dataclass(frozen=True)
class RuleHit:
    route: Route
    rule: str
    evidence: str


@dataclass(frozen=True)
class RuleOpen:
    """A rule saw its cue but cannot tell what the user wants: no rule decides, the classifier does."""

    rule: str
    why: str


@dataclass(frozen=True)
class RuleOutcome:
    """What the rule tier says about one message: a hit, an open question, or nothing."""

    hit: RuleHit | None
    open: RuleOpen | None
    scope: Scope


def _near(a: str, b: str, window: int = 25) -> re.Pattern[str]:
    return _rx(rf"{a}.{{0,{window}}}{b}|{b}.{{0,{window}}}{a}")


_CODE_REQUEST = _near(CODE_VERB, CODE_OBJECT, 40)
_CODE_VERB_RX = _rx(CODE_VERB)
_CODE_OBJECT_RX = _rx(CODE_OBJECT)
_CODE_REQUEST_STRICT = _near(
    CODE_VERB, r"(?:源码|源碼|原始碼|代码|代碼|程式碼|\bcode\b|\bsource\b|\bmodule\b|模块|定义|定義|\bdefin\w+|实现|實作)", 40
)
_GREP_LIKE = _rx(
    r"\b(?:which|what)\s+(?:module|script|code|file|function)\s+(?:reads|writes|generates|parses|"
    r"loads|creates|produces|handles)\b|哪(?:个|個)(?:脚本|腳本|模块|模組|文件|檔案|函数|函數)(?:生成|读|讀|解析|写|寫|处理|處理)|"
    r"\bwhere(?:'s|\s+is)\s+[\w./-]+\.\w+\s*+\??\s*+$|"
    r"\bgrep\b|\brg\s+-n|\bhead\s+-n|\bwhere\s+(?:is|are)\s+\S+\s+defined|\bdefined\?|定义在哪|定義在哪|"
    r"(?:打开|打開|\bopen\b|查看文件|\bread\s+(?:through\s+)?)\s*(?:一下\s*)?"
    rf"(?:[\w.-]*+/[\w./-]*\w|[\w.-]*\w\.(?:{SOURCE_EXT}|{DATA_EXT}))(?![\w-])"
)
#: Nouns that only mean source code (a code request even without a verb: "源码", "冷启动 代码").
_CODE_NOUN = _rx(r"源码|源碼|原始碼|程式碼|代码|代碼|\bsource\s+code\b|\bcode\s?base\b")
_NEGATION = _rx(r"(?:no\s+need\s+for|不用|不要|别整|別整|without|don'?t\s+(?:need|want)|\bnot\b|无需|無需|唔使|不必|別|别).{0,8}$")


#: A verb of doing something (running, measuring, collecting): said inside a set-aside span with
#: no topic of its own ("don't execute it", "先别跑", "don't run anything"), the user declines
#: action altogether, so no measuring route can be sure.
ACT_VERB = _rx(
    r"\b(?:run|execute|exec|measure|collect|capture|profile|record|trace|do\s+it|touch)\w*|"
    r"测|測|跑|执行|執行|运行|運行|采|採|抓|量|动手|動手|操作|碰"
)
#: The cue words a set-aside span can hold, by kind (what the classifier is told was declined).
NEGATED_KINDS: dict[str, re.Pattern[str]] = {}
#: Routes that mean doing something on a device or a program.
ACTING_ROUTES = frozenset({Route.STARTUP, Route.ANDROID, Route.FULL_ANALYSIS})
#: Phrases that ask for a launch measurement to be made now, even next to advice words.
MEASURE_NOW = _rx(
    r"帮我测|幫我測|帮忙测|幫忙測|测一下|測一下|测下|測下|测测|測測|量一下|量下|实测|實測|真机|真機|直接测|直接測|"
    r"(?:^|[,.;!?:]\s*|\b(?:please|pls|can\s+you|could\s+you|then|and|now|just|also)\s+)(?:measure|time|benchmark)\b|"
    r"\b(?:time|measure)\s+it\b"
)


@lru_cache(maxsize=4096)
def _s(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)``, remembered: the rules ask the same question of a message many times."""
    return pattern.search(text)


def _whole_asked(t: str) -> re.Match[str] | None:
    """A whole-pipeline word the user asks for (not "no need for the full report")."""
    for m in WHOLE.finditer(t):
        if not _NEGATION.search(t[max(0, m.start() - 16) : m.start()]):
            return m
    return None


def _explorer(t: str) -> RuleHit | None:
    m = _s(_GREP_LIKE, t)
    if m:
        return RuleHit(Route.EXPLORER, "code-search", m.group(0))
    if _s(ATTRIBUTION, t):
        return None
    # With a data file named, only code proper (not "the hottest function in it") is a code request.
    # Both halves present is a cheap test that saves the windowed search on most messages.
    both = _s(_CODE_VERB_RX, t) and _s(_CODE_OBJECT_RX, t)
    m = both and (_CODE_REQUEST_STRICT if _s(DATA_FILE, t) else _CODE_REQUEST).search(t)
    if m:
        objects = {o.lower() for o in re.findall(CODE_OBJECT, t, re.I)}
        if objects <= {"file", "文件", "檔案"} and _s(EXISTING_DATA, t):
            return RuleOpen("code-verb+code-object", "reading a file that holds existing data")
        return RuleHit(Route.EXPLORER, "code-verb+code-object", m.group(0))
    m = _s(_CODE_NOUN, t)
    if m:
        return RuleHit(Route.EXPLORER, "code-noun", m.group(0))
    return None


def _analyze(t: str) -> RuleHit | RuleOpen | None:
    files = [f for f in DATA_FILE.findall(t)]
    if files and not _s(COLLECT_VERB, t):
        return RuleHit(Route.ANALYZE, "data-file", files[0])
    m = _s(EXISTING_DATA, t)
    if m and not _s(FRESH, t):
        weak = all(WEAK_EXISTING.match(x.group(0)) for x in EXISTING_DATA.finditer(t))
        if weak and _acting(EXISTING_DATA.sub(" ", t)):
            return RuleOpen("existing-data", f"{m.group(0)!r} next to a request for new data")
        return RuleHit(Route.ANALYZE, "existing-data", m.group(0))
    m = _s(COMPARE_SIDES, t)
    if m and not _s(COLLECT_VERB, t):
        return RuleHit(Route.ANALYZE, "compare-sides", m.group(0))
    m = _s(COMPARE_PREVIOUS, t)
    if m and not _s(FRESH, t):
        rest = COMPARE_PREVIOUS.sub(" ", t)  # "the previous run" names old data, it asks for no run
        if _acting(rest) or re.search(r"查|排查|\bfind\s+out|\bfigure\s+out|\bdig\b|\binvestigat|\bprofile\b", rest, re.I):
            return RuleOpen("compare-previous", "a comparison with an earlier run next to a request to act")
        return RuleHit(Route.ANALYZE, "compare-previous", m.group(0))
    return None


def _acting(t: str) -> bool:
    """Whether ``t`` asks for something to be collected, measured or run now."""
    return bool(_s(COLLECT_VERB, t) or _s(ACT_VERB, t) or _s(MEASURE_NOW, t) or _whole_asked(t) or _s(ATTRIBUTION, t))


def _startup(t: str) -> RuleHit | RuleOpen | None:
    launch = _s(LAUNCH, t)
    if not launch or _s(NOT_LAUNCH, t):
        return None
    if _howto(t):
        return None  # "how do I measure cold start?" is advice (the advice rule decides)
    if _s(DEVICE_METRIC, t) and _s(LAUNCH_AS_STEP, t):
        return RuleOpen("launch+measure", f"{launch.group(0)!r} may only be the step before a device measurement")
    m = _s(TWO_TARGETS, t)
    if m:  # "比较一下 v1.py 和 v2.py 的启动耗时": two programs' launches against each other
        return RuleHit(Route.STARTUP, "launch+two-targets", f"{launch.group(0)} / {m.group(0)}")
    measure = _s(MEASURE, t)
    if measure:
        # "Why is launch slow? Measure it" asks for a measurement; "how to optimise launch" or
        # "which command measures warm start" does not, and a rule cannot always tell the two.
        if _s(ADVICE, t) and not _s(MEASURE_NOW, t):
            return RuleOpen("launch+measure", "launch words next to both advice and a measuring word")
        return RuleHit(Route.STARTUP, "launch+measure", f"{launch.group(0)} / {measure.group(0)}")
    bare = re.sub(r"[\s\W_]+", "", LAUNCH.sub("", t))
    if len(bare) <= 4 and not _s(ADVICE, t):
        return RuleHit(Route.STARTUP, "launch-term-alone", launch.group(0))
    return None


def _advice(t: str) -> RuleHit | None:
    if _s(GREETING, t):
        return RuleHit(Route.END, "greeting", t.strip())
    if _s(VAGUE, t) or _s(VAGUE_MORE, t):
        return RuleHit(Route.END, "vague", t.strip())
    m = _s(ADVICE, t)
    if m and not _s(MEASURE, t) and (not _s(PACKAGE, t) or _s(STRONG_ADVICE, t)):
        return RuleHit(Route.END, "advice", m.group(0))
    if _howto(t):
        return RuleHit(Route.END, "how-to question", _s(HOWTO, t).group(0))
    m = _s(TARGET_QUESTION, t)
    if m and not _s(MEASURE_NOW, t) and not _s(PACKAGE, t) and not _s(DATA_FILE, t):
        return RuleHit(Route.END, "what-target question", m.group(0))
    return None


def _howto(t: str) -> bool:
    """A question about method: starts with how-to, asks for nothing now, names no app or data."""
    return bool(_s(HOWTO, t) and not _s(MEASURE_NOW, t) and not _s(PACKAGE, t) and not _s(DATA_FILE, t))


def _whole(t: str) -> RuleHit | RuleOpen | None:
    whole = _whole_asked(t)
    target = _s(TARGET, t)
    why = _s(ATTRIBUTION, t)
    if not whole and why and target and _s(INVESTIGATE, t) and not _s(ADVICE, t) and not _howto(t):
        return RuleHit(Route.FULL_ANALYSIS, "find-the-cause+target", f"{why.group(0)} / {target.group(0)}")
    if whole and target and not _s(ADVICE, t):
        if _s(DEVICE_METRIC, t) and not _s(STRONG_WHOLE, t) and not _s(ATTRIBUTION, t):
            return RuleOpen("whole-pipeline+target", f"{whole.group(0)!r} may mean all of one device metric")
        return RuleHit(Route.FULL_ANALYSIS, "whole-pipeline+target", f"{whole.group(0)} / {target.group(0)}")
    return None


def _device(t: str) -> RuleHit | None:
    metric = _s(DEVICE_METRIC, t)
    if not metric or _whole_asked(t) or _s(ATTRIBUTION, t) or _howto(t):
        return None
    measure = _s(MEASURE, t)
    bare = re.sub(r"[\s\W_]+", "", DEVICE_METRIC.sub("", t))
    if measure and not _s(ADVICE, t):
        return RuleHit(Route.ANDROID, "device-metric+measure", f"{metric.group(0)} / {measure.group(0)}")
    if len(bare) <= 3:
        return RuleHit(Route.ANDROID, "metric-alone", metric.group(0))
    return None


#: docs/ROUTING.md's order: source code, existing data, launch, advice/vague, whole pipeline, device.
RULES = (_explorer, _analyze, _startup, _advice, _whole, _device)

#: The routes whose contract rule comes before every other rule's (1 code, 2 existing data,
#: 3 launch), in that order. A rule that fires further down has, by the contract, found none of
#: their cues — so when the classifier reads one of these routes into the message, a cue may
#: have been phrased in a way no rule knows ("the trace I already sent", "这两次采集的数据").
CUE_ROUTES = (Route.EXPLORER, Route.ANALYZE, Route.STARTUP)
_RULE_RANK = {Route.EXPLORER: 1, Route.ANALYZE: 2, Route.STARTUP: 3, Route.END: 4, Route.FULL_ANALYSIS: 5, Route.ANDROID: 5}


def can_be_doubted(decided: Route) -> bool:
    """Whether some cue route's rule comes before the one that decided (not for ``explorer``)."""
    return any(_RULE_RANK[r] < _RULE_RANK[decided] for r in CUE_ROUTES)


def earlier_rule_route(label: str, decided: Route) -> bool:
    """Whether ``label`` is a cue route whose contract rule comes before the one that decided.

    "分析一下这份启动 trace" decided ``analyze`` by rule 2; a classifier that reads ``startup`` into
    it argues for a *later* rule, which the contract overrules — no doubt there. A classifier
    reading ``analyze`` into what the launch rule decided argues for an *earlier* rule the rules
    may have missed: that is a doubt worth a second look.
    """
    try:
        route = Route(label)
    except ValueError:
        return False
    return route in CUE_ROUTES and _RULE_RANK[route] < _RULE_RANK[decided]


#: Cue kinds of a set-aside span (the classifier's negation features, ``negated_kinds``).
NEGATED_KINDS.update(
    code=_rx(rf"{CODE_VERB}|{CODE_OBJECT}|{_CODE_NOUN.pattern}"),
    launch=LAUNCH,
    whole=WHOLE,
    device=DEVICE_METRIC,
    data=_rx(rf"{DATA_FILE.pattern}|{EXISTING_DATA.pattern}"),
    advice=ADVICE,
    act=ACT_VERB,
)
_TOPICS = ("code", "launch", "whole", "device", "data")


def negated_kinds(scope: Scope) -> list[str]:
    """The cue kinds found in the set-aside spans, in a fixed order (empty when nothing is set aside)."""
    return [k for k, rx in NEGATED_KINDS.items() if any(rx.search(span) for span in scope.set_aside)]


#: What "it" a declined action can have when it declines action altogether.
_GENERIC_OBJECT = _rx(r"\b(?:it|this|that|anything|something|them|for\s+me)\b|任何|东西|東西|什么|什麼")
_NEGATOR_WORDS = _rx(r"\b(?:don'?t|do\s+not|dont|no\s+need\s+to|needn'?t|without|skip|not|no)\b|先别|先別|别|別|不用|不要|不必|无需|無需|唔使|唔好|先不|不")


def _declines_action(scope: Scope) -> str | None:
    """A set-aside span that refuses action as such ("don't execute it", "先别跑"), or None.

    The span must hold a verb of doing and nothing else it could be about: no topic word, and
    either a generic object ("it", "anything", "任何东西") or almost nothing besides the negator
    and the verb ("ignore the old capture" sets a capture aside, it does not refuse to act).
    """
    for span in scope.set_aside:
        if not ACT_VERB.search(span) or any(NEGATED_KINDS[k].search(span) for k in _TOPICS):
            continue
        rest = re.sub(r"[\s\W_]+", "", ACT_VERB.sub("", _NEGATOR_WORDS.sub("", span)))
        if _GENERIC_OBJECT.search(span) or len(rest) <= 3:
            return span
    return None


def evaluate(text: str) -> RuleOutcome:
    """The rule tier on ``text``'s routing view: rules read only what the user asks for.

    Rules run in contract order on the asked-for text (``scope.split_scope``). The first rule
    that fires decides; a rule that returns ``RuleOpen`` stops the tier, so no later rule guesses
    in its place. A measuring route is also left open when the user declined action itself, and
    when everything with a cue was set aside.
    """
    scope = split_scope(text)
    asked = scope.asked
    if not asked.strip():
        return RuleOutcome(None, None, scope)
    if scope.set_aside and not re.sub(r"[\s\W_]+", "", asked):
        return RuleOutcome(None, RuleOpen("scope", "everything the message names is set aside"), scope)
    for rule in RULES:
        result = rule(asked)
        if isinstance(result, RuleOpen):
            return RuleOutcome(None, result, scope)
        if result is not None:
            declined = _declines_action(scope) if result.route in ACTING_ROUTES else None
            if declined:
                return RuleOutcome(None, RuleOpen(result.rule, f"{result.route.value} cue, but the user said {declined!r}"), scope)
            return RuleOutcome(result, None, scope)
    return RuleOutcome(None, None, scope)


def apply_rules(text: str) -> RuleHit | None:
    """The rule that decides ``text`` (see ``evaluate``), or None when no rule is sure."""
    return evaluate(text).hit


__all__ = ["RuleHit", "RuleOpen", "RuleOutcome", "apply_rules", "evaluate", "earlier_rule_route", "can_be_doubted", "CUE_ROUTES", "negated_kinds", "RULES", "LAUNCH", "NOT_LAUNCH", "ADVICE"]
